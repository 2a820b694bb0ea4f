//! The citation writer's checks, each in its order, and the citation it builds.

use super::*;
use crate::decide::decide_freeze;
use crate::review::{REASON_FOREIGN_ROWS, REASON_NO_SAME_SEED};
use seedledger_format::{Verdict, WitnessRow};

const NOW: i64 = 1_890_000_000; // 2029-11-22
const CODE: &str = "diff:c0de";

fn expected() -> Expected {
    Expected {
        property_id: "order_total_nonneg".to_string(),
        digest: "d".repeat(64),
        pin: "e".repeat(64),
        bound: "total>=0".to_string(),
    }
}

/// A row of patch `agent-1842` at [`CODE`].
fn row(id: &str, seed: u64, verdict: Verdict, runner: Runner) -> WitnessRow {
    let e = expected();
    WitnessRow {
        witness_id: id.to_string(),
        property_id: e.property_id,
        property_digest: e.digest,
        fixture_pin: e.pin,
        bound: e.bound,
        seed,
        verdict,
        signature: match verdict {
            Verdict::Pass => "ok".to_string(),
            Verdict::Fail => "assert:quote.total >= 0".to_string(),
        },
        runner,
        freeze_writer: false,
        run_id: None,
        patch_id: Some("agent-1842".to_string()),
        code: Some(CODE.to_string()),
        replayed_signature: None,
        rng: None,
        attempt: None,
    }
}

fn lines(rows: &[WitnessRow]) -> Vec<WitnessLine> {
    let text: Vec<String> = rows.iter().map(WitnessRow::to_json_line).collect();
    seedledger_format::parse_witness_lines(&text.join("\n"))
}

/// Local fail on 1102, local pass on 1101, remote pass on 1102: admitted, same seed.
fn env_dependent() -> Vec<WitnessRow> {
    vec![
        row("l-1101", 1101, Verdict::Pass, Runner::Local),
        row("l-1102", 1102, Verdict::Fail, Runner::Local),
        row("r-1102", 1102, Verdict::Pass, Runner::Remote),
    ]
}

/// Fails on 1102 on both runners, passes on 1101 only: admitted, different inputs.
fn deterministic() -> Vec<WitnessRow> {
    vec![
        row("l-1101", 1101, Verdict::Pass, Runner::Local),
        row("l-1102", 1102, Verdict::Fail, Runner::Local),
        row("r-1102", 1102, Verdict::Fail, Runner::Remote),
    ]
}

fn receipt<'a>(file: &'a str, property_id: &'a str, status: CloseStatus) -> ReceiptFacts<'a> {
    ReceiptFacts {
        file,
        patch_id: "agent-1842",
        property_id,
        status,
        fixture_hash: Some(HASH_E),
        code: Some(CODE),
        code_base: Some("base"),
        current: Current {
            digest: None,
            pin: Some(PIN_E),
            code: Some(CODE),
        },
        disagreement: None,
        failing_seeds: &[1102],
        rng: None,
        run_id: None,
        part_runs: &[],
    }
}

const PIN_E: &str = "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";
const HASH_E: &str = "sha256:eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee";

fn eligible() -> Vec<ReceiptFacts<'static>> {
    vec![
        receipt("a.json", "order_total_nonneg", CloseStatus::FreezeEligible),
        receipt("b.json", "other", CloseStatus::BudgetPassNoFreeze),
    ]
}

/// Runs [`cite`] on rows and receipts with the defaults changed by `edit`.
fn check(
    rows: &[WitnessRow],
    receipts: &[ReceiptFacts<'_>],
    edit: impl FnOnce(&mut CiteRequest<'_>),
) -> Result<Citation, CiteError> {
    let expected = expected();
    let lines = lines(rows);
    let decision = decide_freeze(&lines, &expected);
    // Every local row of these tests is one its run really wrote, unless `forged` says
    // otherwise.
    let local_rows: HashMap<String, WitnessRow> = rows
        .iter()
        .filter(|r| r.runner == Runner::Local && !r.witness_id.starts_with("forged-"))
        .map(|r| (r.witness_id.clone(), r.clone()))
        .collect();
    let mut req = CiteRequest {
        lines: &lines,
        decision: &decision,
        expected: &expected,
        writer: Runner::Local,
        receipts,
        expires_at: Some("2030-01-01T01:00:00+01:00"),
        now: NOW,
        waive_same_seed_review: false,
        local_rows: &local_rows,
        runs_without_receipt: &[],
        spec_reviewed: true,
        roles_authenticated: false,
        cited: &[],
    };
    edit(&mut req);
    cite(&req).map(|(citation, _)| citation)
}

#[test]
fn an_environment_dependent_failure_is_cited_with_its_same_seed_pair() {
    let c = check(&env_dependent(), &eligible(), |_| {}).unwrap();
    assert_eq!(
        (c.fail_id.as_str(), c.pass_id.as_str(), c.seed),
        ("l-1102", "r-1102", Some(1102))
    );
    assert_eq!(c.same_seed_review, SameSeedReview::Passed);
    assert_eq!(c.signature, "assert:quote.total >= 0");
    assert_eq!(
        (c.code.as_str(), c.code_base.as_deref()),
        (CODE, Some("base"))
    );
    assert_eq!(c.expires_at, "2030-01-01T00:00:00Z"); // stored in UTC
    assert_eq!(c.written_at, "2029-11-22T00:00:00Z");
    assert_eq!(c.fixture_pin, "e".repeat(64));
    assert_eq!(c.schema_version, CITATION_SCHEMA_VERSION);
}

#[test]
fn a_deterministic_bug_is_admitted_by_the_decision_but_refused_by_the_review() {
    let expected = expected();
    assert!(decide_freeze(&lines(&deterministic()), &expected).admit);
    let err = check(&deterministic(), &eligible(), |_| {}).unwrap_err();
    assert!(
        matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
        "{err}"
    );
    assert!(!err.is_input_error());
    // Waived explicitly: cited, and the citation says so.
    let c = check(&deterministic(), &eligible(), |r| {
        r.waive_same_seed_review = true;
    })
    .unwrap();
    assert_eq!(c.same_seed_review, SameSeedReview::Waived);
    assert_eq!(
        (c.fail_id.as_str(), c.pass_id.as_str(), c.seed),
        ("r-1102", "l-1101", None),
        "a waived pair still spans the two runners"
    );
    // The flag is recorded even when a same-seed pair exists (the pair is then cited).
    let c = check(&env_dependent(), &eligible(), |r| {
        r.waive_same_seed_review = true;
    })
    .unwrap();
    assert_eq!(c.same_seed_review, SameSeedReview::Waived);
    assert_eq!(c.seed, Some(1102));
}

/// A seed is an input only under a scheme: a local fail under chacha8-v2 and a remote
/// pass under chacha8-v1 (an older remote binary that ignored the receipt's `rng`) are
/// two inputs, and refused; under one scheme they are cited; waived, still cited.
#[test]
fn a_fail_and_a_pass_of_one_seed_under_two_schemes_are_two_inputs() {
    let under = |schemes: [Option<&str>; 3]| -> Vec<WitnessRow> {
        env_dependent()
            .into_iter()
            .zip(schemes)
            .map(|(mut r, s)| {
                r.rng = s.map(str::to_string);
                r
            })
            .collect()
    };
    let v2 = Some("chacha8-v2");
    let mut receipts = eligible();
    receipts[0].rng = v2;
    let err = check(&under([v2, v2, Some("chacha8-v1")]), &receipts, |_| {}).unwrap_err();
    assert!(
        matches!(&err, CiteError::Review { reason, detail }
            if *reason == REASON_NO_SAME_SEED
                && detail.contains("seed 1102: fail `l-1102` under chacha8-v2, pass `r-1102` under chacha8-v1")),
        "{err}"
    );
    // A row without `rng` is chacha8-v1: the same refusal.
    let err = check(&under([v2, v2, None]), &receipts, |_| {}).unwrap_err();
    assert!(
        matches!(&err, CiteError::Review { detail, .. }
            if detail.contains("pass `r-1102` under chacha8-v1")),
        "{err}"
    );
    let c = check(&under([v2, v2, v2]), &receipts, |_| {}).unwrap();
    assert_eq!((c.pass_id.as_str(), c.seed), ("r-1102", Some(1102)));
    // Under chacha8-v1 on both runners (rows and receipt without `rng`): cited too.
    let c = check(
        &under([None, None, Some("chacha8-v1")]),
        &eligible(),
        |_| {},
    )
    .unwrap();
    assert_eq!(c.seed, Some(1102));
    // A v2 receipt does not vouch for the seed under v1.
    let err = check(&under([None; 3]), &receipts, |_| {}).unwrap_err();
    assert!(
        matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
        "{err}"
    );
    // Waived: cited, the waiver recorded.
    let c = check(&under([v2, v2, Some("chacha8-v1")]), &receipts, |r| {
        r.waive_same_seed_review = true;
    })
    .unwrap();
    assert_eq!(c.same_seed_review, SameSeedReview::Waived);
}

#[test]
fn a_same_seed_pair_must_span_the_two_runners() {
    // The remote runner reproduced the failure; a second local run (without the failing
    // environment, say) passed the seed: two local rows prove nothing.
    let rows = vec![
        row("l-1102", 1102, Verdict::Fail, Runner::Local),
        row("r-1102", 1102, Verdict::Fail, Runner::Remote),
        row("l2-1102", 1102, Verdict::Pass, Runner::Local),
    ];
    let err = check(&rows, &eligible(), |_| {}).unwrap_err();
    assert!(
        matches!(&err, CiteError::Review { reason, detail }
            if *reason == REASON_NO_SAME_SEED && detail.contains("do not disagree consistently")),
        "{err}"
    );
    // Local rows alone, a fail and a pass on one seed: nothing either.
    let rows = vec![
        row("l-1101", 1101, Verdict::Pass, Runner::Local),
        row("l-1102", 1102, Verdict::Fail, Runner::Local),
        row("l2-1102", 1102, Verdict::Pass, Runner::Local),
        row("r-1101", 1101, Verdict::Pass, Runner::Remote),
    ];
    assert!(matches!(
        check(&rows, &eligible(), |_| {}).unwrap_err(),
        CiteError::Review { reason, .. } if reason == REASON_NO_SAME_SEED
    ));
    // A remote fail with a local pass on its seed spans them: the failure is the remote
    // runner's.
    let rows = vec![
        row("l-1101", 1101, Verdict::Pass, Runner::Local),
        row("l-1102", 1102, Verdict::Pass, Runner::Local),
        row("r-1102", 1102, Verdict::Fail, Runner::Remote),
    ];
    let c = check(&rows, &eligible(), |_| {}).unwrap();
    assert_eq!(
        (c.fail_id.as_str(), c.pass_id.as_str()),
        ("r-1102", "l-1102")
    );
    // But not when a run of the patch failed that seed locally and its rows were left out
    // of the batch: the rows each receipt's own run wrote count for consistency too.
    let offered = vec![
        row("l2-1102", 1102, Verdict::Pass, Runner::Local),
        row("r-1102", 1102, Verdict::Fail, Runner::Remote),
        row("l2-1101", 1101, Verdict::Pass, Runner::Local),
    ];
    let expected = expected();
    let lines = lines(&offered);
    let decision = crate::decide::decide_freeze(&lines, &expected);
    assert!(decision.admit);
    let mut local_rows: HashMap<String, WitnessRow> = offered
        .iter()
        .filter(|r| r.runner == Runner::Local)
        .map(|r| (r.witness_id.clone(), r.clone()))
        .collect();
    // Its digest edited (with its receipt's) out of the review's scope, its runner relabelled
    // remote: it still counts, as the local row it is.
    let mut withheld = row("l-1102", 1102, Verdict::Fail, Runner::Remote);
    withheld.property_digest = "0".repeat(64);
    local_rows.insert(withheld.witness_id.clone(), withheld);
    let receipts = eligible();
    let req = CiteRequest {
        lines: &lines,
        decision: &decision,
        expected: &expected,
        writer: Runner::Local,
        receipts: &receipts,
        expires_at: Some("2030-01-01T00:00:00Z"),
        now: NOW,
        waive_same_seed_review: false,
        local_rows: &local_rows,
        runs_without_receipt: &[],
        spec_reviewed: true,
        roles_authenticated: false,
        cited: &[],
    };
    assert!(matches!(
        cite(&req).unwrap_err(),
        CiteError::Review { reason, .. } if reason == REASON_NO_SAME_SEED
    ));
}

#[test]
fn with_authenticated_roles_a_remote_pass_answers_only_the_failure_it_replayed() {
    let with = |replayed: Option<&str>| {
        let mut rows = env_dependent();
        rows[2].replayed_signature = replayed.map(str::to_string);
        check(&rows, &eligible(), |r| r.roles_authenticated = true)
    };
    // No replayed signature, or another failure's (a timeout replayed as a pass): refused.
    for replayed in [None, Some("timeout")] {
        let err = with(replayed).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
            "{replayed:?}: {err}"
        );
    }
    // The failure it replayed: cited.
    let c = with(Some("assert:quote.total >= 0")).unwrap();
    assert_eq!(c.seed, Some(1102));
    // Without a trust file rows are claims anyway: no replayed signature is needed.
    assert!(check(&env_dependent(), &eligible(), |_| {}).is_ok());
}

#[test]
fn two_receipts_of_one_run_refuse() {
    let mut receipts = eligible();
    receipts[0].run_id = Some("local-1");
    receipts[1].run_id = Some("local-1");
    assert_eq!(
        check(&env_dependent(), &receipts, |_| {}).unwrap_err(),
        CiteError::DuplicateRun("local-1".into())
    );
}

#[test]
fn the_cited_seed_is_one_an_eligible_receipt_failed() {
    // The eligible receipt failed seed 7 only; a remote replay's fail on 1102 (of a run not
    // given) and a clean local pass on 1102 are no pair a receipt vouches for.
    let rows = vec![
        row("l-7", 7, Verdict::Fail, Runner::Local),
        row("r-1102", 1102, Verdict::Fail, Runner::Remote),
        row("l3-1102", 1102, Verdict::Pass, Runner::Local),
    ];
    let mut receipts = eligible();
    receipts[0].failing_seeds = &[7];
    let err = check(&rows, &receipts, |_| {}).unwrap_err();
    assert!(
        matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
        "{err}"
    );
}

#[test]
fn a_hand_made_local_row_backs_nothing_and_runs_without_receipts_refuse() {
    // The deterministic bug plus a local pass on the failing seed that no run wrote.
    let mut rows = deterministic();
    rows.push(row("forged-1102", 1102, Verdict::Pass, Runner::Local));
    let err = check(&rows, &eligible(), |_| {}).unwrap_err();
    assert!(
        matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_NO_SAME_SEED),
        "{err}"
    );
    let runs: &'static [String] = Box::leak(vec!["local-killed-1".to_string()].into_boxed_slice());
    let err = check(&env_dependent(), &eligible(), |r| {
        r.runs_without_receipt = runs
    })
    .unwrap_err();
    assert_eq!(err, CiteError::RunsWithoutReceipt("local-killed-1".into()));
    // A draft spec: however its receipts read, no citation.
    let err = check(&env_dependent(), &eligible(), |r| r.spec_reviewed = false).unwrap_err();
    assert_eq!(err, CiteError::SpecNotReviewed("order_total_nonneg".into()));
    // A bound the scaffold left as TODO: nothing says what the citation freezes.
    let todo: &'static Expected = Box::leak(Box::new(Expected {
        bound: "TODO: what must always hold".into(),
        ..expected()
    }));
    let err = check(&env_dependent(), &eligible(), |r| r.expected = todo).unwrap_err();
    assert_eq!(
        err.to_string(),
        "props/order_total_nonneg.md's bound still says TODO (`TODO: what must always hold`): a citation freezes a failure of a stated bound; write it, have it reviewed, and run again"
    );
}

#[test]
fn rows_of_another_patch_or_code_never_back_a_citation() {
    for (patch, code) in [("agent-7", CODE), ("agent-1842", "diff:0ld"), ("", "")] {
        let foreign = |r: &mut WitnessRow| {
            r.patch_id = Some(patch.to_string()).filter(|p| !p.is_empty());
            r.code = Some(code.to_string()).filter(|c| !c.is_empty());
        };
        // The same-seed pass comes from elsewhere: the patch's own rows differ in seed.
        let mut rows = env_dependent();
        foreign(&mut rows[2]);
        let err = check(&rows, &eligible(), |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, detail }
                if *reason == REASON_NO_SAME_SEED && detail.contains("another patch or code")),
            "{patch} {code}: {err}"
        );
        // No pass of the patch at all.
        let mut rows = env_dependent();
        foreign(&mut rows[0]);
        foreign(&mut rows[2]);
        let err = check(&rows, &eligible(), |_| {}).unwrap_err();
        assert!(
            matches!(&err, CiteError::Review { reason, .. } if *reason == REASON_FOREIGN_ROWS),
            "{patch} {code}: {err}"
        );
    }
}

#[test]
fn refusals_in_order() {
    let rows = env_dependent();
    let ok = eligible();
    let refused = |edit: &dyn Fn(&mut CiteRequest<'_>)| check(&rows, &ok, |r| edit(r)).unwrap_err();
    assert_eq!(refused(&|r| r.writer = Runner::Remote), CiteError::NotLocal);
    assert_eq!(refused(&|r| r.expires_at = None), CiteError::NoExpiry);
    assert_eq!(refused(&|r| r.expires_at = Some(" ")), CiteError::NoExpiry);
    let bad = refused(&|r| r.expires_at = Some("next week"));
    assert!(matches!(bad, CiteError::BadExpiry(_)) && bad.is_input_error());
    let past = refused(&|r| r.expires_at = Some("2029-11-22T00:00:00Z"));
    assert!(matches!(past, CiteError::PastExpiry { .. }) && past.is_input_error());
    assert_eq!(
        check(&rows, &[], |_| {}).unwrap_err(),
        CiteError::NoReceipts
    );
    let mut two = eligible();
    two[1].patch_id = "agent-7";
    assert!(matches!(
        check(&rows, &two, |_| {}).unwrap_err(),
        CiteError::SeveralPatches(p) if p.len() == 2
    ));
    assert_eq!(
        check(&rows[..1], &ok, |_| {}).unwrap_err(),
        CiteError::NotAdmitted("need two witnesses on the same pin, digest, and bound".into())
    );
    let mut open = eligible();
    open[1].status = CloseStatus::EarlyStopIncomplete;
    assert!(matches!(
        check(&rows, &open, |_| {}).unwrap_err(),
        CiteError::OpenReceipts { open: 1, .. }
    ));
    // An open receipt of older code is retired: it neither blocks nor counts.
    open[1].code = Some("diff:0ld");
    assert!(check(&rows, &open, |_| {}).is_ok());
    let mut unstable = eligible();
    unstable[0].status = CloseStatus::ShrinkUnstable;
    assert!(matches!(
        check(&rows, &unstable, |_| {}).unwrap_err(),
        CiteError::NoEligibleReceipt { retired, .. } if retired.is_empty()
    ));
    let mut moved = eligible();
    moved[0].fixture_hash = Some("sha256:0000");
    let err = check(&rows, &moved, |_| {}).unwrap_err();
    assert!(
        err.to_string().contains("retired (fixture changed)"),
        "{err}"
    );
    let mut rebased = eligible();
    rebased[0].current.code = Some("diff:new");
    let err = check(&rows, &rebased, |_| {}).unwrap_err();
    assert!(err.to_string().contains("retired (diff changed)"), "{err}");
    let mut forged = eligible();
    forged[1].disagreement = Some("failing_seed is null but the run's first failing row is 7");
    assert_eq!(
        check(&rows, &forged, |_| {}).unwrap_err(),
        CiteError::Disagrees {
            file: "b.json".into(),
            detail: "failing_seed is null but the run's first failing row is 7".into()
        }
    );
    let mut no_code = eligible();
    no_code[0].code = None;
    assert_eq!(
        check(&rows, &no_code, |_| {}).unwrap_err(),
        CiteError::NoCodeIdentity("a.json".into())
    );
}

#[test]
fn citable_rows_are_current_runs_own_and_runs_without_receipt_are_named() {
    let with_run = |id: &str, seed, verdict, run: &str| {
        let mut r = row(id, seed, verdict, Runner::Local);
        r.run_id = Some(run.to_string());
        r
    };
    let mut current = receipt("a.json", "order_total_nonneg", CloseStatus::FreezeEligible);
    current.run_id = Some("run-a");
    let mut retired = receipt("b.json", "order_total_nonneg", CloseStatus::FreezeEligible);
    retired.run_id = Some("run-b");
    retired.code = Some("diff:old");
    let a_rows = [with_run("run-a-1101", 1101, Verdict::Pass, "run-a")];
    let b_rows = [with_run("run-b-1102", 1102, Verdict::Fail, "run-b")];
    let beside = ["run-c".to_string()];
    let runs = [
        RunEvidence {
            facts: &current,
            own_rows: &a_rows,
            runs_beside: &beside,
        },
        RunEvidence {
            facts: &retired,
            own_rows: &b_rows,
            runs_beside: &[],
        },
    ];
    let offered = lines(&[
        with_run("run-d-7", 7, Verdict::Fail, "run-d"),
        with_run("replay-x-7", 7, Verdict::Fail, "replay-x"),
        with_run("run-a-1101", 1101, Verdict::Pass, "run-a"),
    ]);
    let (rows, without) = citable_evidence(&runs, &offered).unwrap();
    // Only the current receipt's run's rows; the retired one's count for nothing.
    assert_eq!(rows.keys().collect::<Vec<_>>(), ["run-a-1101"]);
    // Offered rows of an unknown run, then runs beside; replays and known runs are not.
    assert_eq!(without, ["run-d", "run-c"]);

    // Two runs' rows under one id refuse, as an input error.
    let mut other = receipt("c.json", "order_total_nonneg", CloseStatus::FreezeEligible);
    other.run_id = Some("run-e");
    let e_rows = [with_run("run-a-1101", 1101, Verdict::Fail, "run-e")];
    let runs = [
        RunEvidence {
            facts: &current,
            own_rows: &a_rows,
            runs_beside: &[],
        },
        RunEvidence {
            facts: &other,
            own_rows: &e_rows,
            runs_beside: &[],
        },
    ];
    let err = citable_evidence(&runs, &[]).unwrap_err();
    assert_eq!(err, CiteError::EditedRows("run-a-1101".to_string()));
    assert!(err.is_input_error());
    assert!(err.to_string().contains("the evidence was edited"), "{err}");
}

/// `n` replay rows of `seed` on `runner`, the first `fails` failing with the cited signature
/// (or with `other` when given), the rest passing.
fn replays(runner: Runner, seed: u64, n: u32, fails: u32, other: Option<&str>) -> Vec<WitnessRow> {
    (1..=n)
        .map(|attempt| {
            let fail = attempt <= fails;
            // A local replay's rows are no run's own rows (`forged-`: not among the citable
            // local rows), as `prop reproduce --runner local` writes them.
            let tag = if runner == Runner::Local {
                "forged-l"
            } else {
                "r"
            };
            let mut r = row(
                &format!("{tag}-rep-{seed}-{attempt}"),
                seed,
                if fail { Verdict::Fail } else { Verdict::Pass },
                runner,
            );
            if let (true, Some(other)) = (fail, other) {
                r.signature = other.to_string();
            }
            r.attempt = Some(attempt);
            r
        })
        .collect()
}

/// SPEC "Flake rate": the citation records the cited fail row's seed's replays — class and
/// each role's replays, fails and interval — counting only replay rows (with `attempt`) of
/// the patch and code, and a fail with another signature as not failing.
#[test]
fn the_citation_records_the_cited_seeds_flake_rate() {
    let mut rows = env_dependent();
    // A flaky seed: 5 of 20 local replays fail; remote 20 replays pass.
    rows.extend(replays(Runner::Local, 1102, 20, 5, None));
    rows.extend(replays(Runner::Remote, 1102, 20, 0, None));
    // Replays that do not count: another patch's, and rows without `attempt`.
    let mut foreign = replays(Runner::Local, 1102, 20, 20, None);
    for r in &mut foreign {
        r.patch_id = Some("agent-9".to_string());
        r.witness_id.push_str("-foreign");
    }
    rows.extend(foreign);
    let c = check(&rows, &eligible(), |_| {}).unwrap();
    let flake = c.flake.expect("schema 3 records the flake rate");
    assert_eq!((flake.class.as_str(), flake.seed), ("flaky", 1102));
    let local = flake.runners.local.unwrap();
    assert_eq!((local.replays, local.fails), (20, 5));
    assert_eq!(local.interval, ["0.0865".to_string(), "0.4911".to_string()]);
    let remote = flake.runners.remote.unwrap();
    assert_eq!((remote.replays, remote.fails), (20, 0));

    // Without replays the citation says so: `insufficient`, no role.
    let c = check(&env_dependent(), &eligible(), |_| {}).unwrap();
    let flake = c.flake.unwrap();
    assert_eq!(
        (flake.class.as_str(), flake.runners.local),
        ("insufficient", None)
    );

    // Every local replay fails, every remote one passes: environment-dependent is citable.
    let mut rows = env_dependent();
    rows.extend(replays(Runner::Local, 1102, 20, 20, None));
    rows.extend(replays(Runner::Remote, 1102, 25, 0, None));
    let c = check(&rows, &eligible(), |_| {}).unwrap();
    assert_eq!(c.flake.unwrap().class, "environment-dependent");

    // Fails with another signature are not fails with the cited one: not deterministic.
    // (decide_freeze refuses unstable signatures, so they come from a row out of scope here:
    // the replay's rows fail with the cited signature or pass.)
    let mut rows = env_dependent();
    rows.extend(replays(Runner::Remote, 1102, 20, 3, None));
    let c = check(&rows, &eligible(), |_| {}).unwrap();
    let flake = c.flake.unwrap();
    assert_eq!(flake.class, "flaky");
    assert_eq!(flake.runners.remote.unwrap().fails, 3);
}

/// SPEC: `gate cite` refuses a cited seed that fails on every replay of every role that
/// replayed it — with its own reason — and, with the review waived, any replayed seed in
/// scope that does.
#[test]
fn a_seed_that_fails_on_every_replay_is_refused_as_a_bug() {
    // The same-seed pair exists (a remote pass on 1102 that is not a replay), but every
    // replay of 1102 fails.
    let mut rows = env_dependent();
    rows.extend(replays(Runner::Local, 1102, 20, 20, None));
    let err = check(&rows, &eligible(), |_| {}).unwrap_err();
    assert!(
        matches!(err, CiteError::Deterministic { seed: 1102, .. }),
        "{err}"
    );
    assert_eq!(
        err.to_string(),
        "the failing seed fails on every replay: a bug, not a flake (seed 1102: deterministic: local 20/20 failed [0.8315, 1.0000])"
    );
    assert!(!err.is_input_error());
    // 19 replays are not enough to call it: insufficient, and cited.
    let mut rows = env_dependent();
    rows.extend(replays(Runner::Local, 1102, 19, 19, None));
    assert_eq!(
        check(&rows, &eligible(), |_| {})
            .unwrap()
            .flake
            .unwrap()
            .class,
        "insufficient"
    );
    // Waived: a deterministic replayed seed other than the cited one refuses too.
    let mut rows = deterministic();
    rows.extend(replays(Runner::Remote, 1102, 20, 20, None));
    let err = check(&rows, &eligible(), |r| r.waive_same_seed_review = true).unwrap_err();
    assert!(
        matches!(err, CiteError::Deterministic { seed: 1102, .. }),
        "{err}"
    );
    let mut rows = deterministic();
    rows.extend(replays(Runner::Remote, 1102, 20, 19, None));
    let c = check(&rows, &eligible(), |r| r.waive_same_seed_review = true).unwrap();
    assert_eq!(c.flake.unwrap().class, "flaky");
}

/// A receipt's own local fail row edited to carry `attempt` does not drop out of the local
/// runner's consistency: with a second local run passing the seed and a signed remote fail,
/// the review still refuses (before the fix, the edited row was left aside as a replay and a
/// deterministic bug was cited).
#[test]
fn a_local_row_carrying_attempt_still_counts_for_consistency() {
    let mut own_fail = row("l-1102", 1102, Verdict::Fail, Runner::Local);
    own_fail.attempt = Some(1);
    let rows = vec![
        row("l-1101", 1101, Verdict::Pass, Runner::Local),
        own_fail,
        row("l2-1102", 1102, Verdict::Pass, Runner::Local),
        row("r-1102", 1102, Verdict::Fail, Runner::Remote),
    ];
    let err = check(&rows, &eligible(), |r| r.roles_authenticated = true).unwrap_err();
    assert!(
        matches!(err, CiteError::Review { reason, .. } if reason == REASON_NO_SAME_SEED),
        "{err}"
    );
}

/// With authenticated roles the record counts the remote role's replays only: a local replay
/// row (unsigned) cannot turn a remote runner's 20 failing replays into `insufficient`.
#[test]
fn with_authenticated_roles_local_replays_cannot_hide_a_deterministic_seed() {
    let mut pass = row("r-1102", 1102, Verdict::Pass, Runner::Remote);
    pass.replayed_signature = Some("assert:quote.total >= 0".to_string());
    let mut rows = vec![
        row("l-1101", 1101, Verdict::Pass, Runner::Local),
        row("l-1102", 1102, Verdict::Fail, Runner::Local),
        pass,
    ];
    rows.extend(replays(Runner::Remote, 1102, 20, 20, None));
    let mut forged = replays(Runner::Local, 1102, 1, 0, None);
    forged[0].witness_id = "forged-local-replay".to_string();
    rows.extend(forged);
    let err = check(&rows, &eligible(), |r| r.roles_authenticated = true).unwrap_err();
    assert!(
        matches!(err, CiteError::Deterministic { seed: 1102, .. }),
        "{err}"
    );
    // Unauthenticated, every row is a claim: the local one counts (and the record says so).
    let c = check(&rows, &eligible(), |_| {}).unwrap();
    assert_eq!(c.flake.unwrap().class, "insufficient");
}
