//! The fold of `gate flake` against hand-counted cases, one per rule of SPEC's Flake rate.

use super::*;

/// A row of `property` `p1` on `seed`, `verdict` with `signature` on `runner`, of run `run`;
/// `attempt` makes it a replay row.
fn row(
    seed: u64,
    runner: Runner,
    fail: Option<&str>,
    attempt: Option<u32>,
    run: &str,
) -> WitnessRow {
    WitnessRow {
        witness_id: format!("{run}-{seed}-{attempt:?}"),
        property_id: "p1".into(),
        property_digest: "0".repeat(64),
        fixture_pin: "1".repeat(64),
        bound: "b".into(),
        seed,
        verdict: if fail.is_some() {
            Verdict::Fail
        } else {
            Verdict::Pass
        },
        signature: fail.unwrap_or("ok").into(),
        runner,
        freeze_writer: false,
        run_id: Some(run.into()),
        patch_id: Some("pr-1".into()),
        code: None,
        replayed_signature: None,
        rng: None,
        attempt,
    }
}

/// `n` replay rows of `seed` on `runner`, the first `fails` of them failing with `sig`, the
/// rest passing, each carrying `replayed` as their replayed signature.
fn replays(
    seed: u64,
    runner: Runner,
    n: u32,
    fails: u32,
    sig: &str,
    replayed: Option<&str>,
) -> Vec<WitnessRow> {
    (1..=n)
        .map(|k| {
            let mut r = row(
                seed,
                runner,
                (k <= fails).then_some(sig),
                Some(k),
                "reproduce",
            );
            r.replayed_signature = replayed.map(str::to_string);
            r
        })
        .collect()
}

/// Both passes over `rows`, with `receipts` fed first, holding at most `cap` run fail rows.
fn read_holding(
    config: FlakeConfig,
    receipts: &[(&str, &str)],
    rows: &[WitnessRow],
    cap: usize,
) -> FlakeReading {
    let mut reading = FlakeReading::new(config).holding(cap);
    for (run, at) in receipts {
        reading.run(run, Some(at));
    }
    rows.iter().for_each(|r| reading.first(r));
    if reading.needs_second_pass() {
        rows.iter().for_each(|r| reading.second(r));
    }
    reading
}

/// Both passes over `rows`, with `receipts` fed first; the reading that holds the runs' fail
/// rows in its first pass says what the one that reads them in a second pass says (every
/// test of this module checks both).
fn read(config: FlakeConfig, receipts: &[(&str, &str)], rows: &[WitnessRow]) -> FlakeReading {
    let held = read_holding(config.clone(), receipts, rows, usize::MAX);
    let second = read_holding(config, receipts, rows, 0);
    let lines = |r: &FlakeReading| r.lines().map(|l| format!("{l:?}")).collect::<Vec<_>>();
    assert_eq!(lines(&held), lines(&second));
    let unsigned = |r: &FlakeReading| r.unsigned().map(|u| format!("{u:?}")).collect::<Vec<_>>();
    assert_eq!(unsigned(&held), unsigned(&second));
    let (a, b) = (held.notes(), second.notes());
    assert_eq!(
        (a.replay_rows, a.other_patch, a.unknown_runs, a.undated_runs),
        (b.replay_rows, b.other_patch, b.unknown_runs, b.undated_runs)
    );
    held
}

/// What each line says: (seed, signature, class, local (replays, fails), remote (...)).
type Said = (
    u64,
    String,
    &'static str,
    Option<(u64, u64)>,
    Option<(u64, u64)>,
);

fn said(reading: &FlakeReading) -> Vec<Said> {
    reading
        .lines()
        .map(|l| {
            let t = |i: usize| l.roles[i].map(|t| (t.replays, t.fails));
            (
                l.seed,
                l.signature.to_string(),
                l.class.as_str(),
                t(0),
                t(1),
            )
        })
        .collect()
}

const L: Runner = Runner::Local;
const R: Runner = Runner::Remote;

#[test]
fn every_class_is_reached_from_hand_counted_replays() {
    let mut rows = Vec::new();
    // Seed 1: 5 of 20 local replays fail with A: flaky.
    rows.extend(replays(1, L, 20, 5, "A", Some("A")));
    // Seed 2: 20 of 20 on each role: deterministic.
    rows.extend(replays(2, L, 20, 20, "A", Some("A")));
    rows.extend(replays(2, R, 20, 20, "A", Some("A")));
    // Seed 3: every local replay fails, no remote one does: environment-dependent.
    rows.extend(replays(3, L, 20, 20, "A", Some("A")));
    rows.extend(replays(3, R, 20, 0, "A", Some("A")));
    // Seed 4: 20 passing replays of a seed that failed with A: not reproduced.
    rows.extend(replays(4, R, 20, 0, "A", Some("A")));
    // Seed 5: 15 failing local replays: insufficient, 5 more needed.
    rows.extend(replays(5, L, 15, 15, "A", Some("A")));
    let reading = read(FlakeConfig::default(), &[], &rows);
    let s = |seed, class, local, remote| (seed, "A".to_string(), class, local, remote);
    assert_eq!(
        said(&reading),
        vec![
            s(1, "flaky", Some((20, 5)), None),
            s(2, "deterministic", Some((20, 20)), Some((20, 20))),
            s(3, "environment-dependent", Some((20, 20)), Some((20, 0))),
            s(4, "not reproduced", None, Some((20, 0))),
            s(5, "insufficient", Some((15, 15)), None),
        ]
    );
    let short: Vec<[u64; 2]> = reading.lines().map(|l| l.short).collect();
    assert_eq!(short, vec![[0, 0], [0, 0], [0, 0], [0, 0], [5, 0]]);
}

#[test]
fn insufficient_says_how_many_more_each_role_needs() {
    let mut rows = replays(9, L, 20, 3, "A", None);
    rows.extend(replays(9, R, 12, 0, "A", None));
    let reading = read(FlakeConfig::default(), &[], &rows);
    // Flaky wins over insufficient (first match), and the remote still needs 8 more.
    let line = reading.lines().next().unwrap();
    assert_eq!(line.class, FlakeClass::Flaky);
    assert_eq!(line.short, [0, 8]);
    let rows = replays(9, R, 1, 1, "A", None);
    let reading = read(FlakeConfig::default(), &[], &rows);
    let line = reading.lines().next().unwrap();
    assert_eq!(
        (line.class, line.short),
        (FlakeClass::Insufficient, [0, 19])
    );
}

#[test]
fn a_fail_with_another_signature_counts_as_not_failing() {
    // Replays of a seed that failed with A: 20 on the local runner, all failing with B.
    let rows = replays(7, L, 20, 20, "B", Some("A"));
    let reading = read(FlakeConfig::default(), &[], &rows);
    assert_eq!(
        said(&reading),
        vec![
            (7, "A".to_string(), "not reproduced", Some((20, 0)), None),
            (7, "B".to_string(), "deterministic", Some((20, 20)), None),
        ]
    );
}

#[test]
fn the_same_seed_under_two_schemes_is_two_inputs() {
    let mut rows = replays(3, L, 20, 20, "A", Some("A"));
    let mut v2 = replays(3, L, 20, 0, "A", Some("A"));
    v2.iter_mut()
        .for_each(|r| r.rng = Some("chacha8-v2".into()));
    rows.extend(v2);
    let reading = read(FlakeConfig::default(), &[], &rows);
    let lines: Vec<(&str, &str, Option<Tally>)> = reading
        .lines()
        .map(|l| (l.scheme, l.class.as_str(), l.roles[0]))
        .collect();
    assert_eq!(
        lines,
        vec![
            (
                "chacha8-v1",
                "deterministic",
                Some(Tally {
                    replays: 20,
                    fails: 20
                })
            ),
            (
                "chacha8-v2",
                "not reproduced",
                Some(Tally {
                    replays: 20,
                    fails: 0
                })
            ),
        ]
    );
}

#[test]
fn a_run_s_fail_names_the_signature_of_a_seed_replayed_without_one() {
    // Seed 4 failed with A in run r1 (not a replay) and was replayed 20 times, passing, by a
    // replay that recorded no replayed signature; seed 6 failed in r1 and was never replayed;
    // seed 8 was replayed and never failed anywhere.
    let mut rows = vec![
        row(4, L, Some("A"), None, "r1"),
        row(6, L, Some("A"), None, "r1"),
    ];
    rows.extend(replays(4, R, 20, 0, "A", None));
    rows.extend(replays(8, R, 3, 0, "A", None));
    let reading = read(
        FlakeConfig::default(),
        &[("r1", "2026-01-02T00:00:00Z")],
        &rows,
    );
    assert_eq!(
        said(&reading),
        vec![(4, "A".to_string(), "not reproduced", None, Some((20, 0)))]
    );
    let unsigned: Vec<(u64, u64)> = reading.unsigned().map(|u| (u.seed, u.replays)).collect();
    assert_eq!(unsigned, vec![(8, 3)]);
    let line = reading.lines().next().unwrap();
    assert_eq!(
        line.first_seen.map(|s| s.text.as_str()),
        Some("2026-01-02T00:00:00Z")
    );
}

#[test]
fn the_trend_spans_the_runs_that_saw_the_failure_across_inputs() {
    // Three pushes' artifacts: the seed fails with A in r2 and r3 (fed out of time order),
    // passes in r1; replays come from a run without a receipt.
    let receipts = [
        ("r3", "2026-03-01T00:00:00Z"),
        ("r1", "2026-01-01T00:00:00Z"),
        ("r2", "2026-02-01T09:30:00+02:00"),
    ];
    let mut rows = vec![
        row(11, L, None, None, "r1"),
        row(11, L, Some("A"), None, "r3"),
        row(11, L, Some("A"), None, "r2"),
    ];
    rows.extend(replays(11, L, 10, 4, "A", Some("A")));
    rows.extend(replays(11, R, 10, 1, "A", Some("A")));
    let reading = read(FlakeConfig::default(), &receipts, &rows);
    let line = reading.lines().next().unwrap();
    assert_eq!(
        line.first_seen.map(|s| s.text.as_str()),
        Some("2026-02-01T09:30:00+02:00")
    );
    assert_eq!(
        line.last_seen.map(|s| s.text.as_str()),
        Some("2026-03-01T00:00:00Z")
    );
    assert_eq!(
        line.roles,
        [
            Some(Tally {
                replays: 10,
                fails: 4
            }),
            Some(Tally {
                replays: 10,
                fails: 1
            })
        ]
    );
    // Five failing replay rows have no receipt: no sighting, and no note (a replay's run
    // never has one).
    assert_eq!(reading.notes().unknown_runs, 0);
    assert_eq!(reading.notes().replay_rows, 20);
}

#[test]
fn rows_of_another_patch_are_left_out_when_one_is_asked_for() {
    let mut rows = replays(2, L, 20, 20, "A", Some("A"));
    let mut other = replays(2, L, 20, 0, "A", Some("A"));
    other
        .iter_mut()
        .for_each(|r| r.patch_id = Some("pr-2".into()));
    rows.extend(other);
    let config = FlakeConfig {
        patch_id: Some("pr-1".into()),
    };
    let reading = read(config, &[], &rows);
    assert_eq!(
        said(&reading),
        vec![(2, "A".to_string(), "deterministic", Some((20, 20)), None)]
    );
    assert_eq!(reading.notes().other_patch, 20);
    let reading = read(FlakeConfig::default(), &[], &rows);
    assert_eq!(
        said(&reading),
        vec![(2, "A".to_string(), "flaky", Some((40, 20)), None)]
    );
}

#[test]
fn without_replay_rows_there_is_no_second_pass_and_no_line() {
    let rows = [
        row(1, L, Some("A"), None, "r1"),
        row(2, R, None, None, "r1"),
    ];
    let mut reading = FlakeReading::new(FlakeConfig::default());
    rows.iter().for_each(|r| reading.first(&r.clone()));
    assert!(!reading.needs_second_pass());
    assert_eq!(reading.lines().count(), 0);
    assert!(reading.wanted_seeds().is_empty());
}

#[test]
fn an_undated_receipt_is_counted_and_names_no_run() {
    let mut reading = FlakeReading::new(FlakeConfig::default());
    reading.run("r1", Some("yesterday"));
    reading.run("r2", None);
    assert_eq!(reading.notes().undated_runs, 2);
}
