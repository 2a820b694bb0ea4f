//! The default suite end to end through the runner: it passes on the real code, planted bugs
//! make the right property fail with a named seed, every seed runs, runs are deterministic,
//! a fixture edited mid-run keeps the receipt open, and replays reproduce failures exactly.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::{LedgerView, Receipt, Runner, Verdict, parse_witness_lines};
use seedledger_gate::{CloseStatus, close_ledger_text};
use seedledger_orders::{
    Account, AccountError, CORRECT, Catalog, CouponKind, DEFAULT_BUDGET_CENTS, Impl, Op, Order,
    PlanBook, PriceError, Quote, check_order_total_within_budget, order_total_within_budget,
    properties,
};
use seedledger_runner::engine::{
    Outcome, ReplayInput, RunConfig, RunSummary, replay, run_property,
};
use seedledger_runner::{Fixture, Property, ShrinkConfig, TestCase};
use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

/// A scratch workspace root holding copies of the real props/ and fixtures/.
struct Root {
    dir: tempfile::TempDir,
}

impl Root {
    /// A scratch root whose props/ and fixtures/ are committed in a git repository of its
    /// own, so that specs count as committed wherever the temporary directory lives.
    fn new() -> Root {
        let root = Root::uncommitted();
        git(root.path(), &["init", "-q"]);
        git(root.path(), &["add", "props", "fixtures"]);
        git(root.path(), &["commit", "-q", "-m", "specs"]);
        root
    }

    /// The copies only: no repository of its own.
    fn uncommitted() -> Root {
        let dir = tempfile::tempdir().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        for sub in ["props", "fixtures"] {
            std::fs::create_dir_all(dir.path().join(sub)).unwrap();
            for entry in std::fs::read_dir(repo.join(sub)).unwrap() {
                let entry = entry.unwrap();
                std::fs::copy(entry.path(), dir.path().join(sub).join(entry.file_name())).unwrap();
            }
        }
        Root { dir }
    }

    fn path(&self) -> &Path {
        self.dir.path()
    }

    fn config(&self, seeds: Vec<u64>) -> RunConfig {
        RunConfig {
            root: self.path().to_path_buf(),
            out_dir: self.path().join("out"),
            patch_id: "agent-1842".into(),
            runner: Runner::Local,
            seeds,
            rng: seedledger_runner::Scheme::DEFAULT,
            shrink: Some(ShrinkConfig {
                max_evaluations: 2_000,
                max_time: Duration::from_secs(20),
            }),
            durability: seedledger_runner::Durability::CrashSafe,
            trial_timeout: None,
            code: None,
            signer: None,
            partition: None,
        }
    }
}

fn property(id: &str) -> Property {
    properties().into_iter().find(|p| p.id == id).unwrap()
}

fn read_receipt(summary: &RunSummary) -> (String, Receipt) {
    let text = std::fs::read_to_string(&summary.receipt_path).unwrap();
    let receipt = Receipt::parse(&text).unwrap();
    (text, receipt)
}

#[test]
fn default_suite_passes_on_the_real_code() {
    let root = Root::new();
    for p in &properties() {
        let summary = run_property(p, &root.config((1..=300).collect())).unwrap();
        assert!(summary.passed(), "{}: {:?}", p.id, summary.receipt.failures);
        let (text, receipt) = read_receipt(&summary);
        assert_eq!(receipt.attempted_seeds, receipt.planned_seeds);
        assert!(!receipt.stopped_early);
        assert_eq!(receipt.failing_seed, None);
        assert!(!receipt.shrink_stable);
        assert_eq!(
            close_ledger_text(&text).unwrap().status,
            CloseStatus::BudgetPassNoFreeze
        );
        let rows = parse_witness_lines(&std::fs::read_to_string(&summary.witness_path).unwrap());
        assert_eq!(rows.len(), 300);
        assert!(
            rows.iter()
                .all(|l| l.row.as_ref().unwrap().verdict == Verdict::Pass)
        );
    }
}

// ------------------------------------------------------------------ planted bugs

fn price_without_coupon_clamp(catalog: &Catalog, order: &Order) -> Result<Quote, PriceError> {
    let mut q = seedledger_orders::price(catalog, order)?;
    // The bug: a fixed coupon takes off its whole amount, even beyond the subtotal.
    if let Some(code) = &order.coupon {
        let coupon = catalog.coupons.iter().find(|c| &c.code == code).unwrap();
        if let CouponKind::Fixed { amount_cents } = coupon.kind
            && q.subtotal >= coupon.min_subtotal_cents
        {
            q.coupon_discount = amount_cents;
            let taxable = q.subtotal - amount_cents;
            q.tax = seedledger_orders::tax_on(taxable, catalog.tax_rate_bp)?;
            q.total = taxable + q.tax;
        }
    }
    Ok(q)
}

fn apply_ignoring_fee_in_limit(
    book: &PlanBook,
    account: &mut Account,
    op: Op,
) -> Result<(), AccountError> {
    // The bug: the limit check forgets the fee, so a fee can push past the limit.
    match op {
        Op::Withdraw(amount) if amount > 0 => {
            let after = account.balance_cents - amount;
            if after < -account.plan.overdraft_limit_cents {
                return Err(AccountError::InsufficientFunds {
                    amount,
                    balance: account.balance_cents,
                    limit: 0,
                });
            }
            let fee = if after < 0 {
                account.plan.overdraft_fee_cents
            } else {
                0
            };
            account.balance_cents = after - fee;
            Ok(())
        }
        _ => seedledger_orders::apply(book, account, op),
    }
}

fn apply_with_off_by_one_limit(
    book: &PlanBook,
    account: &mut Account,
    op: Op,
) -> Result<(), AccountError> {
    // The bug: a withdrawal of exactly the balance plus one cent is let through.
    if let Op::Withdraw(amount) = op
        && account.plan.overdraft_limit_cents == 0
        && amount == account.balance_cents + 1
    {
        account.balance_cents -= amount;
        return Ok(());
    }
    seedledger_orders::apply(book, account, op)
}

const NO_CLAMP: Impl = Impl {
    price: price_without_coupon_clamp,
    ..CORRECT
};
const FEE_BUG: Impl = Impl {
    apply: apply_ignoring_fee_in_limit,
    ..CORRECT
};
const OFF_BY_ONE: Impl = Impl {
    apply: apply_with_off_by_one_limit,
    ..CORRECT
};

const PLANTED: &[(&str, Property)] = &[
    (
        "no coupon clamp",
        Property::new("order_total_nonneg", |tc, fx| {
            seedledger_orders::check_order_total_nonneg(tc, fx, &NO_CLAMP)
        }),
    ),
    (
        "no coupon clamp",
        Property::new("order_total_adds_up", |tc, fx| {
            seedledger_orders::check_order_total_adds_up(tc, fx, &NO_CLAMP)
        }),
    ),
    (
        "fee ignored in limit",
        Property::new("overdraft_limit_respected", |tc, fx| {
            seedledger_orders::check_overdraft_limit_respected(tc, fx, &FEE_BUG)
        }),
    ),
    (
        "off by one",
        Property::new("prop_balance_non_negative", |tc, fx| {
            seedledger_orders::check_balance_non_negative(tc, fx, &OFF_BY_ONE)
        }),
    ),
];

#[test]
fn planted_bugs_fail_the_right_property_with_a_named_seed() {
    let root = Root::new();
    for (bug, p) in PLANTED {
        let summary = run_property(p, &root.config((1..=400).collect())).unwrap();
        let (text, receipt) = read_receipt(&summary);
        assert!(!summary.passed(), "{bug}: {} did not fail", p.id);
        let seed = receipt.failing_seed.unwrap();
        assert_eq!(receipt.failing_seeds[0], seed);
        assert!(receipt.attempted_seeds.contains(&seed));
        assert_eq!(
            receipt.attempted_seeds.len(),
            400,
            "{bug}: every seed runs after a failure"
        );
        assert!(
            receipt.failures[0].signature.starts_with("assert:"),
            "{bug}: {:?}",
            receipt.failures[0]
        );
        // The named seed reproduces through a replay, with the same signature.
        let again = replay(
            p,
            root.path(),
            &seedledger_runner::engine::ReplayTarget {
                witness_path: &summary.witness_path,
                runner: Runner::Remote,
                expected_fixture_hash: Some(receipt.fixture_hash.as_str()),
                patch_id: "agent-1842",
                code: None,
                signer: None,
                replayed_signature: None,
                attempt: None,
            },
            &ReplayInput::Seed {
                seed,
                rng: seedledger_runner::Scheme::DEFAULT,
            },
        )
        .unwrap();
        assert_eq!(
            again.outcome.failure().unwrap().signature,
            receipt.failures[0].signature
        );
        let status = close_ledger_text(&text).unwrap().status;
        let shrink = receipt.shrink.as_ref().unwrap();
        assert!(shrink.minimal_choices.len() <= shrink.original_choices_len);
        // A deterministic bug shrinks to the same fixed point twice: the receipt is complete
        // evidence of a failure (which the gate's later reviews then refuse to freeze).
        assert!(
            receipt.shrink_stable,
            "{bug}: shrinking a deterministic failure was not stable: {shrink:?}"
        );
        assert_eq!(status, CloseStatus::FreezeEligible, "{bug}");
        // The real code passes the same seed.
        let real = property(p.id);
        let fixture = Fixture::new(
            std::fs::read(root.path().join(receipt.fixture_path.as_deref().unwrap())).unwrap(),
        );
        assert_eq!(
            seedledger_runner::engine::execute(&real, &mut TestCase::random(seed), &fixture),
            Outcome::Pass
        );
    }
}

// ------------------------------------------------------------------ every seed, in order

#[test]
fn a_property_failing_on_one_seed_of_four_attempts_all_four() {
    // The seed documents' example: plan 1101..=1104, seed 1102 fails.
    let root = Root::new();
    // A property that fails exactly on the input seed 1102 generates.
    let inputs: Vec<u64> = (1101..=1104u64)
        .map(|s| TestCase::random(s).draw(&seedledger_runner::any_int::<u64>()))
        .collect();
    INPUTS.lock().unwrap().clone_from(&inputs);
    let p = Property::new("order_total_nonneg", |tc, _fx| {
        let x = tc.draw(&seedledger_runner::any_int::<u64>());
        let bad = INPUTS.lock().unwrap()[1];
        seedledger_runner::prop_assert!(x != bad, "x = {x}");
        Ok(())
    });
    let summary = run_property(&p, &root.config(vec![1101, 1102, 1103, 1104])).unwrap();
    let (text, receipt) = read_receipt(&summary);
    assert_eq!(receipt.planned_seeds, vec![1101, 1102, 1103, 1104]);
    assert_eq!(receipt.attempted_seeds, vec![1101, 1102, 1103, 1104]);
    assert_eq!(receipt.failing_seed, Some(1102));
    assert_eq!(receipt.failing_seeds, vec![1102]);
    assert_eq!(receipt.verdicts.as_deref(), Some(".F.."));
    assert!(!receipt.stopped_early);
    let rows = parse_witness_lines(&std::fs::read_to_string(&summary.witness_path).unwrap());
    let verdicts: Vec<_> = rows
        .iter()
        .map(|l| {
            let r = l.row.as_ref().unwrap();
            (r.seed, r.verdict)
        })
        .collect();
    assert_eq!(
        verdicts,
        vec![
            (1101, Verdict::Pass),
            (1102, Verdict::Fail),
            (1103, Verdict::Pass),
            (1104, Verdict::Pass)
        ]
    );
    let ids: std::collections::BTreeSet<_> =
        rows.iter().map(|l| l.witness_id.clone().unwrap()).collect();
    assert_eq!(ids.len(), 4, "witness ids are unique");
    LedgerView::parse(&text).unwrap();
}

static INPUTS: Mutex<Vec<u64>> = Mutex::new(Vec::new());

// ------------------------------------------------------------------ determinism

#[test]
fn two_runs_write_identical_receipts_apart_from_timestamps() {
    let root = Root::new();
    let p = PLANTED[0].1.clone();
    let strip = |summary: &RunSummary| {
        let mut v: serde_json::Value =
            serde_json::from_str(&std::fs::read_to_string(&summary.receipt_path).unwrap()).unwrap();
        let map = v.as_object_mut().unwrap();
        for k in ["started_at", "finished_at", "elapsed_ms", "run_id"] {
            map.remove(k);
        }
        // Shrink passes' wall times, of the failing seed's shrink and of each failure
        // mode's: a loaded machine can make one take a millisecond more.
        let untime = |shrink: &mut serde_json::Value| {
            for pass in shrink["passes"].as_array_mut().unwrap() {
                pass.as_object_mut().unwrap().remove("millis");
            }
        };
        if let Some(shrink) = map.get_mut("shrink") {
            untime(shrink);
        }
        for mode in map["failure_modes"].as_array_mut().unwrap() {
            if let Some(shrink) = mode.get_mut("shrink").filter(|s| !s.is_null()) {
                untime(shrink);
            }
        }
        v
    };
    let first = strip(&run_property(&p, &root.config((1..=200).collect())).unwrap());
    let second = strip(&run_property(&p, &root.config((1..=200).collect())).unwrap());
    assert_eq!(first, second);
}

// ------------------------------------------------------------------ fixture edited mid-run

static EDIT_TARGET: Mutex<Option<PathBuf>> = Mutex::new(None);

#[test]
fn a_fixture_modified_during_the_run_keeps_the_receipt_open() {
    let root = Root::new();
    *EDIT_TARGET.lock().unwrap() = Some(root.path().join("fixtures/order.json"));
    let p = Property::new("order_total_nonneg", |tc, fx| {
        let n = tc.draw(&seedledger_runner::int(0..=100u32));
        if n == 0 || fx.bytes().is_empty() {
            // Some early trial edits the file on disk; the property keeps its pinned bytes.
            if let Some(path) = EDIT_TARGET.lock().unwrap().take() {
                let mut bytes = std::fs::read(&path).unwrap();
                bytes.extend_from_slice(b"\n");
                std::fs::write(&path, bytes).unwrap();
            }
        }
        Ok(())
    });
    let summary = run_property(&p, &root.config((1..=200).collect())).unwrap();
    assert!(
        EDIT_TARGET.lock().unwrap().is_none(),
        "the fixture was edited"
    );
    let (text, receipt) = read_receipt(&summary);
    assert_eq!(receipt.fixture_changed, Some(true));
    assert!(receipt.stopped_early);
    assert_ne!(
        receipt.fixture_hash_after.as_deref(),
        Some(receipt.fixture_hash.as_str())
    );
    assert!(!summary.passed());
    assert_eq!(
        close_ledger_text(&text).unwrap().status,
        CloseStatus::EarlyStopIncomplete
    );
}

// ------------------------------------------------------------------ replay

#[test]
fn replay_reproduces_a_failure_and_its_minimal_input_exactly() {
    let root = Root::new();
    let p = PLANTED[0].1.clone();
    let summary = run_property(&p, &root.config((1..=300).collect())).unwrap();
    let (_, receipt) = read_receipt(&summary);
    let seed = receipt.failing_seed.unwrap();
    let a = replay(
        &p,
        root.path(),
        &seedledger_runner::engine::ReplayTarget {
            witness_path: &summary.witness_path,
            runner: Runner::Local,
            expected_fixture_hash: Some(receipt.fixture_hash.as_str()),
            patch_id: "agent-1842",
            code: None,
            signer: None,
            replayed_signature: None,
            attempt: None,
        },
        &ReplayInput::Seed {
            seed,
            rng: seedledger_runner::Scheme::DEFAULT,
        },
    )
    .unwrap();
    let b = replay(
        &p,
        root.path(),
        &seedledger_runner::engine::ReplayTarget {
            witness_path: &summary.witness_path,
            runner: Runner::Remote,
            expected_fixture_hash: Some(receipt.fixture_hash.as_str()),
            patch_id: "agent-1842",
            code: None,
            signer: None,
            replayed_signature: None,
            attempt: None,
        },
        &ReplayInput::Seed {
            seed,
            rng: seedledger_runner::Scheme::DEFAULT,
        },
    )
    .unwrap();
    assert_eq!(a.drawn, b.drawn);
    assert_eq!(a.outcome, b.outcome);
    let shrink = receipt.shrink.as_ref().unwrap();
    assert_eq!(a.drawn.join(", "), shrink.original_input);
    assert_eq!(
        a.outcome.failure().unwrap().signature,
        receipt.failures[0].signature
    );
    let w = b.witness.unwrap();
    assert_eq!(
        (w.runner, w.freeze_writer, w.seed, w.verdict),
        (Runner::Remote, false, seed, Verdict::Fail)
    );
    // The receipt is never rewritten by a replay.
    assert_eq!(
        Receipt::parse(&std::fs::read_to_string(&summary.receipt_path).unwrap()).unwrap(),
        receipt
    );
    // The stored minimal choices replay to the minimal input and the same signature.
    let m = replay(
        &p,
        root.path(),
        &seedledger_runner::engine::ReplayTarget {
            witness_path: &summary.witness_path,
            runner: Runner::Local,
            expected_fixture_hash: Some(receipt.fixture_hash.as_str()),
            patch_id: "agent-1842",
            code: None,
            signer: None,
            replayed_signature: None,
            attempt: None,
        },
        &ReplayInput::Choices {
            seed,
            choices: shrink.minimal_choices.clone(),
        },
    )
    .unwrap();
    assert_eq!(m.drawn.join(", "), shrink.minimal_input);
    assert_eq!(m.outcome.failure().unwrap().signature, shrink.signature);
    assert!(m.witness.is_none());
    // A changed fixture refuses the replay.
    std::fs::write(root.path().join("fixtures/order.json"), b"{}").unwrap();
    let refused = replay(
        &p,
        root.path(),
        &seedledger_runner::engine::ReplayTarget {
            witness_path: &summary.witness_path,
            runner: Runner::Local,
            expected_fixture_hash: Some(receipt.fixture_hash.as_str()),
            patch_id: "agent-1842",
            code: None,
            signer: None,
            replayed_signature: None,
            attempt: None,
        },
        &ReplayInput::Seed {
            seed,
            rng: seedledger_runner::Scheme::DEFAULT,
        },
    );
    assert!(
        matches!(
            refused,
            Err(seedledger_runner::engine::RunError::PinMismatch { .. })
        ),
        "{refused:?}"
    );
}

#[test]
fn an_unreadable_fixture_stops_the_run_before_any_receipt() {
    let root = Root::new();
    std::fs::remove_file(root.path().join("fixtures/order.json")).unwrap();
    let err = run_property(&property("order_total_nonneg"), &root.config(vec![1, 2])).unwrap_err();
    assert!(err.to_string().contains("fixtures/order.json"), "{err}");
    assert!(
        !root.path().join("out").exists()
            || std::fs::read_dir(root.path().join("out/agent-1842"))
                .map_or(true, |mut d| d.next().is_none())
    );
}

// ------------------------------------------------------------------ the whole evidence chain

static FLICKER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(true);

#[test]
fn a_flaky_failure_goes_from_run_to_replay_to_an_admitted_freeze() {
    use seedledger_gate::{Expected, decide_freeze, witness_lines_from_bytes};
    use std::sync::atomic::Ordering;
    let root = Root::new();
    // A property whose outcome depends on the environment, not on its input: it fails on
    // the local runner and passes when the remote runner replays the same seed.
    let p = Property::new("order_total_nonneg", |tc, fx| {
        let catalog = fx.parsed(Catalog::from_json)?;
        let n = tc.draw(&seedledger_runner::int(0..=catalog.products.len() as u32));
        seedledger_runner::prop_assert!(!FLICKER.load(Ordering::SeqCst), "n = {n}");
        Ok(())
    });
    let summary = run_property(&p, &root.config((1101..=1104).collect())).unwrap();
    let (text, receipt) = read_receipt(&summary);
    assert_eq!(receipt.failing_seed, Some(1101));
    assert!(
        receipt.shrink_stable,
        "a constant environment shrinks the same way twice"
    );
    assert_eq!(
        close_ledger_text(&text).unwrap().status,
        CloseStatus::FreezeEligible
    );

    FLICKER.store(false, Ordering::SeqCst);
    let remote = replay(
        &p,
        root.path(),
        &seedledger_runner::engine::ReplayTarget {
            witness_path: &summary.witness_path,
            runner: Runner::Remote,
            expected_fixture_hash: Some(receipt.fixture_hash.as_str()),
            patch_id: "agent-1842",
            code: None,
            signer: None,
            replayed_signature: None,
            attempt: None,
        },
        &ReplayInput::Seed {
            seed: 1101,
            rng: seedledger_runner::Scheme::DEFAULT,
        },
    )
    .unwrap();
    assert_eq!(remote.outcome, Outcome::Pass);

    let spec = seedledger_runner::engine::load_spec(root.path(), "order_total_nonneg").unwrap();
    let (_, pin) = seedledger_runner::engine::load_fixture(root.path(), &spec).unwrap();
    let expected = Expected {
        property_id: "order_total_nonneg".into(),
        digest: spec.digest.clone(),
        pin,
        bound: spec.spec.bound.clone(),
    };
    let lines = witness_lines_from_bytes(&std::fs::read(&summary.witness_path).unwrap());
    assert_eq!(lines.len(), 5, "four local trials and one remote replay");
    let decision = decide_freeze(&lines, &expected);
    assert!(decision.admit, "{decision:?}");
    assert_eq!(decision.reason, "stable signature across opposite verdicts");
    let local_fail = lines[0].row.as_ref().unwrap();
    assert_eq!(
        decision.fail_id.as_deref(),
        Some(local_fail.witness_id.as_str())
    );
    assert_eq!(
        decision.pass_id.as_ref(),
        remote.witness.as_ref().map(|w| &w.witness_id)
    );

    // Without the remote replay the same rows cannot admit.
    let decision = decide_freeze(&lines[..4], &expected);
    assert!(!decision.admit);
    assert_eq!(decision.reason, "opposite verdicts required");
}

#[test]
fn parallel_runs_report_in_suite_order_and_write_the_same_evidence() {
    let root = Root::new();
    let mut order = Vec::new();
    let mut config = root.config((1..=150).collect());
    let suite = properties();
    seedledger_runner::engine::run_properties(&suite, &config, 3, |p, result| {
        let summary = result.unwrap();
        assert_eq!(summary.property_id, p.id);
        order.push(p.id);
    });
    assert_eq!(order, suite.iter().map(|p| p.id).collect::<Vec<_>>());
    for p in &suite {
        let (parallel, _) =
            seedledger_runner::engine::evidence_paths(&config.out_dir, "agent-1842", p.id).unwrap();
        let parallel: Receipt =
            Receipt::parse(&std::fs::read_to_string(parallel).unwrap()).unwrap();
        config.out_dir = root.path().join("sequential");
        let sequential = run_property(p, &config).unwrap().receipt;
        config.out_dir = root.path().join("out");
        assert_eq!(
            (parallel.attempted_seeds, parallel.verdicts),
            (sequential.attempted_seeds, sequential.verdicts)
        );
    }
}

/// The parameterised property: each closure runs with the budget it captured.
#[test]
fn the_budget_property_passes_or_fails_by_its_captured_budget() {
    /// Tax rounding that adds a cent: every total is one cent over.
    fn price_one_cent_over(catalog: &Catalog, order: &Order) -> Result<Quote, PriceError> {
        let q = seedledger_orders::price(catalog, order)?;
        Ok(Quote {
            tax: q.tax + 1,
            total: q.total + 1,
            ..q
        })
    }
    const ONE_CENT_OVER: Impl = Impl {
        price: price_one_cent_over,
        ..CORRECT
    };
    let with = |imp: Impl, budget: i64| {
        Property::from_fn("order_total_within_budget", move |tc, fx| {
            check_order_total_within_budget(tc, fx, &imp, budget)
        })
    };
    let root = Root::new();
    let seeds: Vec<u64> = (1..=100).collect();
    let config = root.config(seeds.clone());
    for budget in [0, 45, DEFAULT_BUDGET_CENTS, 10_000_000] {
        let summary = run_property(&with(CORRECT, budget), &config).unwrap();
        assert!(
            summary.passed(),
            "budget {budget}: {:?}",
            summary.receipt.failures
        );
    }
    // Within a budget of 0 every order is worth 0: one cent over fails every seed.
    let none = run_property(&with(ONE_CENT_OVER, 0), &config).unwrap();
    assert_eq!(none.receipt.failing_seeds, seeds);
    // Far above the largest order (8 lines of 40 kettles), the cent never shows.
    let ample = run_property(&with(ONE_CENT_OVER, 10_000_000), &config).unwrap();
    assert!(ample.passed(), "{:?}", ample.receipt.failures);
    // The suite's property is the constructor's, with the default budget.
    let registered = property("order_total_within_budget");
    let summary = run_property(&registered, &config).unwrap();
    assert!(summary.passed(), "{:?}", summary.receipt.failures);
    assert_eq!(
        summary.receipt.verdicts,
        run_property(&order_total_within_budget(DEFAULT_BUDGET_CENTS), &config)
            .unwrap()
            .receipt
            .verdicts
    );
}

// ------------------------------------------------------------------ drafts are not specs

fn git(root: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
        ])
        .args(args)
        .current_dir(root)
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn an_uncommitted_spec_is_a_draft_whatever_it_says() {
    let root = Root::new();
    let p = PLANTED[0].1.clone(); // fails, shrinks stably: eligible when the spec is committed
    let committed = run_property(&p, &root.config((1..=100).collect())).unwrap();
    assert_eq!(committed.receipt.spec_committed, Some(true));
    assert_eq!(
        committed.receipt.oracle_source,
        seedledger_format::OracleSource::HumanReviewed
    );

    // An agent edits the spec without committing it: the receipt cannot close.
    let spec = root.path().join("props/order_total_nonneg.md");
    let text = std::fs::read_to_string(&spec).unwrap() + "\nEdited.\n";
    std::fs::write(&spec, text).unwrap();
    let edited = run_property(&p, &root.config((1..=100).collect())).unwrap();
    assert_eq!(edited.receipt.spec_committed, Some(false));
    assert_eq!(
        edited.receipt.oracle_source,
        seedledger_format::OracleSource::ModelDraft
    );
    let (text, _) = read_receipt(&edited);
    assert_eq!(
        close_ledger_text(&text).unwrap().status,
        CloseStatus::OracleUnreviewed
    );

    // Hiding the edit from `git diff` does not help: the bytes are compared with HEAD's.
    git(
        root.path(),
        &[
            "update-index",
            "--assume-unchanged",
            "props/order_total_nonneg.md",
        ],
    );
    let hidden = run_property(&p, &root.config((1..=100).collect())).unwrap();
    assert_eq!(hidden.receipt.spec_committed, Some(false));
    git(
        root.path(),
        &[
            "update-index",
            "--no-assume-unchanged",
            "props/order_total_nonneg.md",
        ],
    );

    // Committed, it is the spec again.
    git(root.path(), &["commit", "-q", "-am", "edit"]);
    let again = run_property(&p, &root.config((1..=100).collect())).unwrap();
    assert_eq!(again.receipt.spec_committed, Some(true));
    assert_eq!(
        again.receipt.oracle_source,
        seedledger_format::OracleSource::HumanReviewed
    );

    // A repository without any commit holds no spec yet.
    let fresh = Root::uncommitted();
    git(fresh.path(), &["init", "-q"]);
    git(fresh.path(), &["add", "props", "fixtures"]);
    let staged = run_property(&p, &fresh.config((1..=10).collect())).unwrap();
    assert_eq!(staged.receipt.spec_committed, Some(false));
    assert_eq!(
        staged.receipt.oracle_source,
        seedledger_format::OracleSource::ModelDraft
    );

    // Outside any repository git cannot tell: the field is left out (when the temporary
    // directory is itself inside a work tree, the copy counts as untracked instead).
    let plain = Root::uncommitted();
    let unknown = run_property(&p, &plain.config((1..=10).collect())).unwrap();
    let in_a_repo = std::process::Command::new("git")
        .args(["rev-parse", "--is-inside-work-tree"])
        .current_dir(plain.path())
        .output()
        .is_ok_and(|o| o.status.success());
    let expected = if in_a_repo { Some(false) } else { None };
    assert_eq!(unknown.receipt.spec_committed, expected);
}
