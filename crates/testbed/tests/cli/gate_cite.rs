//! `cargo xtask gate cite` end to end, in scratch git repositories (a citation names the code
//! identity of its evidence, which git computes): a citation is written into the freeze store
//! only when every check of SPEC's Citation section passes — a local writer, an expiry, an
//! admit, no open receipt, a current freeze_eligible receipt, and a fail and a pass of the
//! patch at that code on one seed — and the refusal is printed otherwise.

use crate::gate::{
    ADMIT, Dir, NO_SAME_SEED, REVIEW_REFUSED, Run, edit, json_lines, keys, review_json_refused,
    review_passed,
};
use serde_json::{Value, json};

/// An expiry far enough ahead for every run of this suite.
const FUTURE: &str = "2999-01-01T00:00:00Z";
const PATCH: &str = "agent-1842";
const STORE: &str = "props/freezes";
/// The seed a receipt's run fails on ([`Dir::evidence`]: seeds 1101..=1104).
const FAILING: u64 = 1103;
/// The review's refusal when the patch's rows at its code hold no fail or no pass.
const FOREIGN: &str =
    "the cited fail and pass rows must come from the patch being cited and its code identity";
/// What `gate cite` says of a cited seed no runner replayed (`prop reproduce --repeat`).
const UNMEASURED: &str =
    "flake rate of seed 1103: insufficient: no replays (frozen as insufficient)";
/// The prefix of every refusal for want of a current eligible receipt.
const NO_ELIGIBLE: &str = "patch `agent-1842` has no freeze_eligible receipt for property `order_total_nonneg` made against the current fixture and code";

/// A repository to cite in: a base commit holding the spec and the fixture, and a patch
/// commit on top. The rows, receipts and citations the tests write stay untracked, so the
/// work tree's code identity is the patch commit's throughout.
struct Patch {
    dir: Dir,
    /// The base commit id.
    base: String,
    /// The code identity of the base commit: older code.
    old: String,
    /// The work tree's code identity: `commit:<patch commit>`.
    code: String,
}

impl Patch {
    fn new() -> Patch {
        let dir = Dir::repo();
        let base = dir.git(&["rev-parse", "HEAD"]);
        let old = dir.head_code();
        let head = dir.commit("patch.rs", "// the patch under test\n");
        let code = dir.head_code();
        assert_eq!(
            (old.as_str(), code.as_str()),
            (
                format!("commit:{base}").as_str(),
                format!("commit:{head}").as_str()
            )
        );
        Patch {
            dir,
            base,
            old,
            code,
        }
    }

    /// A witness row of patch `agent-1842` at `code`.
    fn row_at(&self, code: &str, id: &str, seed: u64, verdict: &str, runner: &str) -> Value {
        let signature = if verdict == "fail" {
            "AssertionError"
        } else {
            "ok"
        };
        edit(
            self.dir.row_on(seed, id, verdict, signature, runner),
            json!({"patch_id": PATCH, "code": code}),
        )
    }

    /// A witness row of patch `agent-1842` at the work tree's code.
    fn row(&self, id: &str, seed: u64, verdict: &str, runner: &str) -> Value {
        self.row_at(&self.code, id, seed, verdict, runner)
    }

    /// The row its run wrote on `seed` beside the receipt `rel` (written by
    /// [`Patch::receipt`] or [`Dir::evidence`]): id `run-<receipt name>-<seed>`, of run
    /// `run-<receipt name>`, failing on [`FAILING`] only. The only kind of local row that can
    /// back a citation.
    fn own(&self, rel: &str, seed: u64) -> Value {
        own_row(&self.dir, rel, seed)
    }

    /// The admitted pair on the failing seed, in `w.jsonl`: the fail the run of `r.json`
    /// wrote (`run-r-1103`) and a remote pass on the same seed (`w-remote-9`). `r.json` must
    /// have been written.
    fn admitted_pair(&self) {
        self.dir.write_rows(
            "w.jsonl",
            &[
                self.own("r.json", FAILING),
                self.row("w-remote-9", FAILING, "pass", "remote"),
            ],
        );
    }

    /// A receipt of patch `agent-1842` at the work tree's code, with `changes` applied, and
    /// its run's rows beside it ([`Dir::evidence`]).
    fn receipt(&self, rel: &str, changes: Value) {
        self.dir
            .evidence(rel, edit(json!({"code": self.code}), changes));
    }

    /// A citable receipt `r.json` of the work tree's code and, in `w.jsonl`, its run's fail on
    /// the failing seed and pass on 1101, and a remote pass on the failing seed.
    fn citable(&self) {
        self.receipt("r.json", json!({}));
        self.dir.write_rows(
            "w.jsonl",
            &[
                self.own("r.json", FAILING),
                self.own("r.json", 1101),
                self.row("w-remote-9", FAILING, "pass", "remote"),
            ],
        );
    }

    /// `gate cite` of `order_total_nonneg` over `w.jsonl`, with `extra` appended.
    fn cite(&self, receipts: &[&str], extra: &[&str]) -> Run {
        self.cite_env(receipts, extra, &[])
    }

    /// [`Patch::cite`] with extra environment variables.
    fn cite_env(&self, receipts: &[&str], extra: &[&str], env: &[(&str, &str)]) -> Run {
        let mut args = vec![
            "gate",
            "cite",
            "--property",
            "order_total_nonneg",
            "--witnesses",
            "w.jsonl",
            "--receipts",
        ];
        args.extend(receipts);
        args.extend(extra);
        self.dir.run_env(&args, env)
    }

    /// The file names in the default freeze store, sorted.
    fn store(&self) -> Vec<String> {
        store_of(&self.dir, STORE)
    }
}

/// See [`Patch::own`].
fn own_row(dir: &Dir, rel: &str, seed: u64) -> Value {
    let run = format!("run-{}", rel.trim_end_matches(".json").replace('/', "-"));
    let beside = std::path::Path::new(rel).with_file_name("order_total_nonneg.witness.jsonl");
    dir.run_row(beside.to_str().unwrap(), &format!("{run}-{seed}"))
}

fn store_of(dir: &Dir, rel: &str) -> Vec<String> {
    let Ok(entries) = std::fs::read_dir(dir.path().join(rel)) else {
        return Vec::new();
    };
    let mut names: Vec<String> = entries
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

/// Every file of the workspace outside `.git`, relative to it.
fn tree(dir: &Dir) -> Vec<String> {
    let prefix = format!("{}/", dir.path().display());
    dir.files()
        .iter()
        .map(|f| f.strip_prefix(&prefix).unwrap().to_string())
        .collect()
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ`, computed here from the civil
/// calendar (H. Hinnant's days-to-date algorithm), not by the code under test.
fn utc(secs: i64) -> String {
    let (days, rem) = (secs.div_euclid(86_400), secs.rem_euclid(86_400));
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1_460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + i64::from(month <= 2);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3_600,
        rem % 3_600 / 60,
        rem % 60
    )
}

/// The system clock now, as [`utc`] writes it.
fn utc_now() -> String {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap();
    utc(i64::try_from(now.as_secs()).unwrap())
}

#[test]
fn the_tests_own_utc_clock_formats_known_instants() {
    for (secs, want) in [
        (0, "1970-01-01T00:00:00Z"),
        (951_782_400, "2000-02-29T00:00:00Z"),
        (1_893_456_000, "2030-01-01T00:00:00Z"),
        (1_924_991_999, "2030-12-31T23:59:59Z"),
    ] {
        assert_eq!(utc(secs), want);
    }
}

/// The citation file's full content, as this test expects it: every field of SPEC's
/// Citation plus the schema's signature, seed, review and code identity.
struct Expect<'a> {
    fail_id: &'a str,
    pass_id: &'a str,
    seed: Option<u64>,
    review: &'a str,
    code: &'a str,
    code_base: Option<&'a str>,
    expires_at: &'a str,
}

impl Expect<'_> {
    fn value(&self, dir: &Dir, written_at: &str) -> Value {
        let mut v = json!({
            "schema_version": 3,
            "patch_id": PATCH,
            "property_id": "order_total_nonneg",
            "property_digest": dir.digest(),
            "fixture_pin": dir.pin(),
            "bound": "total>=0",
            "signature": "AssertionError",
            "fail_id": self.fail_id,
            "pass_id": self.pass_id,
            "same_seed_review": self.review,
            "code": self.code,
            "expires_at": self.expires_at,
            "written_at": written_at,
        });
        if let Some(seed) = self.seed {
            v["seed"] = json!(seed);
        }
        if let Some(base) = self.code_base {
            v["code_base"] = json!(base);
        }
        // No replay rows in these batches: the cited fail row's seed is unmeasured.
        v["flake"] = json!({"class": "insufficient", "seed": FAILING, "runners": {}});
        v
    }
}

/// Reads the citation `name` of the store and checks it field by field, its `written_at`
/// between `before` and `after` (the test's clock), and its file name:
/// `<property>.<written_at without separators>.<8 hex>.json`.
fn check_citation(dir: &Dir, name: &str, want: &Expect<'_>, before: &str, after: &str) {
    let text = dir.read(&format!("{STORE}/{name}"));
    let value: Value = serde_json::from_str(&text).unwrap();
    let written_at = value["written_at"].as_str().unwrap().to_string();
    assert!(
        before <= written_at.as_str() && written_at.as_str() <= after,
        "written_at {written_at} is not between {before} and {after}"
    );
    assert_eq!(value, want.value(dir, &written_at), "{name}");
    let stamp = written_at.replace(['-', ':'], "");
    let hex = name
        .strip_prefix(&format!("order_total_nonneg.{stamp}."))
        .and_then(|rest| rest.strip_suffix(".json"))
        .unwrap_or_else(|| panic!("{name} is not order_total_nonneg.{stamp}.<8 hex>.json"));
    assert!(
        hex.len() == 8 && hex.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f')),
        "{name}"
    );
}

#[test]
fn cite_writes_a_citation_into_the_store_when_every_check_passes() {
    // Without a base the code identity is the HEAD commit; with one (the receipt's
    // code_base), the digest of the diff against it, and the citation names the base.
    for with_base in [false, true] {
        let p = Patch::new();
        let code = if with_base {
            p.dir.diff_code(&p.base)
        } else {
            p.code.clone()
        };
        let mut identity = json!({"code": code});
        if with_base {
            identity["code_base"] = json!(p.base);
        }
        p.receipt("r.json", identity.clone());
        p.receipt(
            "other.json",
            edit(
                identity,
                json!({"property_id": "other", "failing_seed": null}),
            ),
        );
        // The decision names the first fail and the first pass; the review, and so the
        // citation, the fail and the pass on one seed. The local rows are the ones the run
        // of `r.json` wrote beside it (its fail on 1103, a pass on 1101).
        p.dir.write_rows(
            "w.jsonl",
            &[
                p.own("r.json", FAILING),
                p.own("r.json", 1101),
                p.row_at(&code, "w-remote-9", FAILING, "pass", "remote"),
            ],
        );
        let before = utc_now();
        let run = p.cite(&["r.json", "other.json"], &["--expires-at", FUTURE]);
        let after = utc_now();
        assert_eq!(run.code, 0, "{}", run.stderr);
        let names = p.store();
        assert_eq!(names.len(), 1, "{names:?}");
        let name = &names[0];
        assert_eq!(
            run.stdout,
            format!(
                "{ADMIT}\nfail_id: run-r-1103\npass_id: run-r-1101\n{}\n{UNMEASURED}\ncitation written: props/freezes/{name}\n",
                review_passed("run-r-1103", "w-remote-9", 1103)
            )
        );
        let want = Expect {
            fail_id: "run-r-1103",
            pass_id: "w-remote-9",
            seed: Some(1103),
            review: "passed",
            code: &code,
            code_base: with_base.then_some(p.base.as_str()),
            expires_at: FUTURE,
        };
        check_citation(&p.dir, name, &want, &before, &after);
        // Nothing else is written: no temporary file beside it, nothing elsewhere.
        assert_eq!(
            tree(&p.dir),
            [
                "fixtures/order.json".to_string(),
                "order_total_nonneg.witness.jsonl".to_string(),
                "other.json".to_string(),
                "other.witness.jsonl".to_string(),
                "patch.rs".to_string(),
                format!("props/freezes/{name}"),
                "props/order_total_nonneg.md".to_string(),
                "r.json".to_string(),
                "w.jsonl".to_string(),
            ],
            "with_base {with_base}"
        );
        // The receipt's stderr note names its code identity.
        assert!(
            run.stderr
                .contains(&format!("receipt `r.json` (patch `{PATCH}`, property `order_total_nonneg`, code {code}): freeze_eligible")),
            "{}",
            run.stderr
        );
    }
}

/// Citations are never refreshed, extended or overwritten: the first cite writes a new file
/// beside whatever the store held, and a second cite of the same evidence with a later expiry
/// is refused (SPEC: Who may cite), leaving every file as it was. JSON output: the last line
/// says what was written.
#[test]
fn cite_writes_a_new_file_and_never_cites_the_same_evidence_again() {
    let p = Patch::new();
    p.citable();
    p.dir.write("props/freezes/old.json", "the old citation\n");
    let before = utc_now();
    let first = p.cite(&["r.json"], &["--expires-at", FUTURE]);
    let after = utc_now();
    assert_eq!(first.code, 0, "{}", first.stderr);
    let names = p.store();
    assert_eq!(names.len(), 2, "{names:?}");
    let first_name = names.iter().find(|n| *n != "old.json").unwrap().clone();
    let first_text = p.dir.read(&format!("{STORE}/{first_name}"));
    let second = p.cite(
        &["r.json"],
        &[
            "--expires-at",
            "2999-01-01T03:00:00.5+02:00",
            "--format",
            "json",
        ],
    );
    assert_eq!(second.code, 1, "{}", second.stderr);
    assert_eq!(p.store(), names);
    let last = json_lines(&second.stdout).pop().unwrap();
    assert_eq!(last["written"], false);
    assert_eq!(last["citation"], Value::Null);
    assert_eq!(
        last["refusal"],
        format!(
            "witness `run-r-1103` is already cited by `props/freezes/{first_name}`: one piece of evidence backs one citation, which is never refreshed or extended; a new citation needs new evidence"
        )
    );
    let want = Expect {
        fail_id: "run-r-1103",
        pass_id: "w-remote-9",
        seed: Some(1103),
        review: "passed",
        code: &p.code,
        code_base: None,
        expires_at: FUTURE,
    };
    check_citation(&p.dir, &first_name, &want, &before, &after);
    assert_eq!(p.dir.read(&format!("{STORE}/{first_name}")), first_text);
    assert_eq!(
        p.dir.read(&format!("{STORE}/old.json")),
        "the old citation\n"
    );
}

#[test]
fn cite_default_store_is_under_the_root_and_store_moves_it() {
    // The workspace is `ws/`, a repository of its own; the command runs beside it.
    let dir = Dir::new();
    dir.write("ws/props/order_total_nonneg.md", crate::gate::SPEC);
    dir.write("ws/fixtures/order.json", crate::gate::FIXTURE);
    dir.git(&["-C", "ws", "init", "-q"]);
    dir.git(&["-C", "ws", "add", "."]);
    dir.git(&["-C", "ws", "commit", "-q", "-m", "base"]);
    let code = format!("commit:{}", dir.git(&["-C", "ws", "rev-parse", "HEAD"]));
    dir.evidence("r.json", json!({"code": code}));
    dir.write_rows(
        "w.jsonl",
        &[
            own_row(&dir, "r.json", FAILING),
            edit(
                dir.row_on(FAILING, "w-remote-9", "pass", "ok", "remote"),
                json!({"patch_id": PATCH, "code": code}),
            ),
        ],
    );
    let cite = |extra: &[&str]| {
        let mut args = vec![
            "gate",
            "cite",
            "--property",
            "order_total_nonneg",
            "--witnesses",
            "w.jsonl",
            "--receipts",
            "r.json",
            "--expires-at",
            FUTURE,
            "--root",
            "ws",
        ];
        args.extend(extra);
        dir.run(&args)
    };
    let run = cite(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names = store_of(&dir, "ws/props/freezes");
    assert_eq!(names.len(), 1);
    assert!(
        run.stdout.ends_with(&format!(
            "\ncitation written: ws/props/freezes/{}\n",
            names[0]
        )),
        "{}",
        run.stdout
    );
    assert!(!dir.exists(STORE));
    // `--store DIR` is created when missing; the default store is left alone.
    let run = cite(&["--store", "elsewhere/freezes"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let moved = store_of(&dir, "elsewhere/freezes");
    assert_eq!(moved.len(), 1);
    assert!(
        run.stdout.ends_with(&format!(
            "\ncitation written: elsewhere/freezes/{}\n",
            moved[0]
        )),
        "{}",
        run.stdout
    );
    assert_eq!(store_of(&dir, "ws/props/freezes"), names);
}

#[test]
fn cite_waives_the_same_seed_review_only_when_asked() {
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    // The run's fail on seed 1103 and a remote pass on seed 1104: two inputs, admitted by
    // decision 2.
    p.dir.write_rows(
        "w.jsonl",
        &[
            p.own("r.json", FAILING),
            p.row("w-remote-9", 1104, "pass", "remote"),
        ],
    );
    let run = p.cite(&["r.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.starts_with(&format!(
            "{ADMIT}\nfail_id: run-r-1103\npass_id: w-remote-9\n{REVIEW_REFUSED}\ncitation refused: {NO_SAME_SEED} ("
        )),
        "{}",
        run.stdout
    );
    let run = p.cite(&["r.json"], &["--expires-at", FUTURE, "--format", "json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let mut last = json_lines(&run.stdout).pop().unwrap();
    let refusal = last["refusal"].take();
    assert!(
        refusal
            .as_str()
            .unwrap()
            .starts_with(&format!("{NO_SAME_SEED} (")),
        "{refusal}"
    );
    assert_eq!(
        last,
        json!({
            "written": false,
            "reason": ADMIT,
            "refusal": null,
            "review_reason": NO_SAME_SEED,
            "flake": null,
            "citation": null,
            "fail_id": "run-r-1103",
            "pass_id": "w-remote-9",
            "same_seed_review": review_json_refused(),
            "roles": "unauthenticated",
        })
    );
    assert!(p.store().is_empty());

    let before = utc_now();
    let run = p.cite(
        &["r.json"],
        &["--expires-at", FUTURE, "--waive-same-seed-review"],
    );
    let after = utc_now();
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names = p.store();
    assert_eq!(names.len(), 1);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), 6, "{}", run.stdout);
    assert_eq!(
        (&lines[..3], lines[4], lines[5]),
        (
            &[ADMIT, "fail_id: run-r-1103", "pass_id: w-remote-9"][..],
            UNMEASURED,
            format!("citation written: props/freezes/{}", names[0]).as_str()
        ),
        "{}",
        run.stdout
    );
    // The citation says the review was waived and names no seed.
    let want = Expect {
        fail_id: "run-r-1103",
        pass_id: "w-remote-9",
        seed: None,
        review: "waived",
        code: &p.code,
        code_base: None,
        expires_at: FUTURE,
    };
    check_citation(&p.dir, &names[0], &want, &before, &after);
}

/// (case, witness rows, receipts, extra flags, decision reason, refusal)
type RefusalCase<'a> = (
    &'a str,
    &'a [Value],
    &'a [&'a str],
    &'a [&'a str],
    &'a str,
    String,
);

#[test]
fn cite_refusals_exit_1_with_the_reason_and_write_nothing() {
    let p = Patch::new();
    let other_pin = format!("sha256:{}", "0".repeat(64));
    // Each receipt of the property beside its own run's rows only (a directory each): rows
    // of a run whose receipt is not given refuse a citation.
    p.receipt("r.json", json!({}));
    p.receipt(
        "open/open.json",
        json!({"attempted_seeds": [1101, 1102], "stopped_early": true}),
    );
    p.receipt("unstable/unstable.json", json!({"shrink_stable": false}));
    p.receipt("pass/pass.json", json!({"failing_seed": null}));
    p.receipt("elsewhere.json", json!({"property_id": "other"}));
    p.receipt("moved/moved.json", json!({"fixture_hash": other_pin}));
    p.receipt("old/old.json", json!({"code": p.old}));
    p.dir.evidence("no-code/no-code.json", json!({}));
    // The eligible receipt with `stopped_early` repeated, open first (SPEC: Duplicate keys).
    let eligible = p.dir.read("r.json");
    p.dir.write(
        "repeated.json",
        eligible.replacen(
            "\"stopped_early\": false",
            "\"stopped_early\": true,\n  \"stopped_early\": false",
            1,
        ),
    );
    assert_ne!(p.dir.read("repeated.json"), eligible);

    // The fail of the run of `r.json` and a remote pass on its seed.
    let pair = [
        p.own("r.json", FAILING),
        p.row("w-remote-9", FAILING, "pass", "remote"),
    ];
    // Where `r.json` is not given its run's rows would refuse for want of their receipt;
    // a local replay of the failing seed (no run's row: it backs no citation, but these
    // refusals come before the review) is admitted by the decision all the same.
    let replayed = [
        edit(
            p.row("replay-local-1103", FAILING, "fail", "local"),
            json!({"run_id": "replay-local-1"}),
        ),
        p.row("w-remote-9", FAILING, "pass", "remote"),
    ];
    let both_local = [p.own("r.json", FAILING), p.own("r.json", 1101)];
    let fut: &[&str] = &["--expires-at", FUTURE];
    let cases: [RefusalCase; 11] = [
        (
            "remote writer",
            &pair,
            &["r.json"],
            &["--expires-at", FUTURE, "--runner", "remote"],
            ADMIT,
            "a remote runner cannot write a citation".into(),
        ),
        (
            "no expiry",
            &pair,
            &["r.json"],
            &[],
            ADMIT,
            "a citation needs an expiry from policy".into(),
        ),
        (
            "empty expiry",
            &pair,
            &["r.json"],
            &["--expires-at", ""],
            ADMIT,
            "a citation needs an expiry from policy".into(),
        ),
        (
            "remote writer wins over a missing expiry",
            &pair,
            &["r.json"],
            &["--runner", "remote"],
            ADMIT,
            "a remote runner cannot write a citation".into(),
        ),
        (
            "decision refused: no remote witness",
            &both_local,
            &["r.json"],
            fut,
            "need both a local witness and a remote witness",
            "no admit: need both a local witness and a remote witness".into(),
        ),
        (
            "an open receipt of the same patch at the current code",
            &pair,
            &["r.json", "open/open.json"],
            fut,
            ADMIT,
            "patch `agent-1842` has 1 open receipt(s) (open/open.json); freeze creation is disabled"
                .into(),
        ),
        (
            "no eligible receipt for the property",
            &replayed,
            &["unstable/unstable.json", "pass/pass.json", "elsewhere.json"],
            fut,
            ADMIT,
            NO_ELIGIBLE.into(),
        ),
        (
            "the only eligible receipt was made against another fixture",
            &replayed,
            &["moved/moved.json"],
            fut,
            ADMIT,
            format!("{NO_ELIGIBLE}; 1 retired: `moved/moved.json` retired (fixture changed)"),
        ),
        (
            "the only eligible receipt was made on older code",
            &replayed,
            &["old/old.json"],
            fut,
            ADMIT,
            format!("{NO_ELIGIBLE}; 1 retired: `old/old.json` retired (diff changed)"),
        ),
        (
            "the eligible receipt records no code identity",
            &replayed,
            &["no-code/no-code.json"],
            fut,
            ADMIT,
            "receipt `no-code/no-code.json` records no code identity (was it run outside a git work tree?); a citation must name the code its evidence came from".into(),
        ),
        (
            "an open receipt refuses even beside a retired one",
            &pair,
            &["old/old.json", "r.json", "open/open.json"],
            fut,
            ADMIT,
            "patch `agent-1842` has 1 open receipt(s) (open/open.json); freeze creation is disabled"
                .into(),
        ),
    ];
    for (case, rows, receipts, extra, reason, refusal) in cases {
        p.dir.write_rows("w.jsonl", rows);
        let admitted = reason == ADMIT;
        // The decision names the batch's first fail and first pass: its two rows, in order.
        let (fail_id, pass_id) = (
            rows[0]["witness_id"].as_str().unwrap(),
            rows[1]["witness_id"].as_str().unwrap(),
        );
        let run = p.cite(receipts, extra);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        let decision = if admitted {
            format!("{ADMIT}\nfail_id: {fail_id}\npass_id: {pass_id}\n")
        } else {
            format!("{reason}\n")
        };
        assert_eq!(
            run.stdout,
            // Every refusal here comes before the review, which is then not run.
            format!(
                "{decision}same-seed review: not reached (the citation was refused before it)\ncitation refused: {refusal}\n"
            ),
            "{case}"
        );
        assert!(p.store().is_empty(), "{case}");
        let mut json_extra = extra.to_vec();
        json_extra.extend(["--format", "json"]);
        let run = p.cite(receipts, &json_extra);
        assert_eq!(run.code, 1, "{case}");
        assert_eq!(
            json_lines(&run.stdout).pop().unwrap(),
            json!({
                "written": false,
                "reason": reason,
                "refusal": refusal,
                "review_reason": null,
                "flake": null,
                "citation": null,
                "fail_id": if admitted { json!(fail_id) } else { Value::Null },
                "pass_id": if admitted { json!(pass_id) } else { Value::Null },
                "same_seed_review": null,
                "roles": "unauthenticated",
            }),
            "{case}"
        );
        assert!(p.store().is_empty(), "{case}");
    }
    // A receipt that repeats `stopped_early` (open first, closed last) never backs a
    // citation: it is refused, naming that receipt (SPEC: Duplicate keys).
    p.admitted_pair();
    for extra in [&[][..], &["--format", "json"][..]] {
        let mut args = fut.to_vec();
        args.extend(extra);
        let run = p.cite(&["r.json", "repeated.json"], &args);
        assert_eq!(run.code, 1, "{}", run.stderr);
        let last = run.stdout.lines().last().unwrap();
        assert!(
            last.contains("repeated.json")
                && (last.starts_with("citation refused: ") || last.contains("\"written\":false")),
            "{}",
            run.stdout
        );
        assert!(p.store().is_empty());
    }
    let run = p.dir.run(&["gate", "close", "repeated.json"]);
    assert!(
        run.stdout.starts_with("repeated.json: incomplete_fields (")
            && run.stdout.contains("duplicate key `stopped_early`"),
        "{}",
        run.stdout
    );

    // Each retired receipt is named on stderr with what changed.
    for (file, why) in [
        ("moved/moved.json", "retired (fixture changed)"),
        ("old/old.json", "retired (diff changed)"),
    ] {
        let run = p.cite(&[file], &["--expires-at", FUTURE]);
        assert!(
            run.stderr.contains(&format!("receipt `{file}` (patch"))
                && run
                    .stderr
                    .contains(&format!("{why}: not counted as evidence")),
            "{file}: {}",
            run.stderr
        );
    }
}

/// The same-seed review at citation time reads only rows of the patch being cited at its
/// code identity (SPEC: Witness row extensions; Same-seed review).
#[test]
fn cite_refuses_rows_of_another_patch_or_code() {
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    let agent_7 = json!({"patch_id": "agent-7"});
    let old = json!({"code": p.old});
    // The fail the run of `r.json` wrote, and a remote pass on its seed.
    let fail = p.own("r.json", FAILING);
    let pass = p.row("w-remote-9", FAILING, "pass", "remote");
    let cases = [
        (
            "every row from another patch",
            vec![
                edit(fail.clone(), agent_7.clone()),
                edit(pass.clone(), agent_7.clone()),
            ],
            FOREIGN,
        ),
        (
            "every row from older code",
            vec![
                edit(fail.clone(), old.clone()),
                edit(pass.clone(), old.clone()),
            ],
            FOREIGN,
        ),
        (
            "rows that name no patch or code (the seed document's)",
            vec![
                p.dir.row("w-local-1", "fail", "AssertionError", "local"),
                p.dir.row("w-remote-9", "pass", "ok", "remote"),
            ],
            FOREIGN,
        ),
        (
            "the only pass is from older code",
            vec![fail.clone(), edit(pass.clone(), old.clone())],
            FOREIGN,
        ),
        (
            "the only fail is from another patch",
            vec![edit(fail.clone(), agent_7.clone()), pass.clone()],
            FOREIGN,
        ),
        (
            "the pass on the failing seed is from another patch",
            vec![
                fail.clone(),
                p.row("w-remote-8", 1104, "pass", "remote"),
                edit(pass.clone(), agent_7.clone()),
            ],
            NO_SAME_SEED,
        ),
        (
            "the fail on the passing seed is from older code",
            vec![
                edit(fail.clone(), old.clone()),
                p.row("w-remote-7", 1104, "fail", "remote"),
                pass.clone(),
            ],
            NO_SAME_SEED,
        ),
    ];
    for (case, rows, review_reason) in cases {
        p.dir.write_rows("w.jsonl", &rows);
        let run = p.cite(&["r.json"], &["--expires-at", FUTURE]);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        assert_eq!(run.stdout.lines().next(), Some(ADMIT), "{case}");
        assert!(
            run.stdout
                .lines()
                .last()
                .unwrap()
                .starts_with(&format!("citation refused: {review_reason} (")),
            "{case}: {}",
            run.stdout
        );
        let run = p.cite(&["r.json"], &["--expires-at", FUTURE, "--format", "json"]);
        assert_eq!(run.code, 1, "{case}");
        let last = json_lines(&run.stdout).pop().unwrap();
        assert_eq!(
            keys(&last),
            [
                "citation",
                "fail_id",
                "flake",
                "pass_id",
                "reason",
                "refusal",
                "review_reason",
                "roles",
                "same_seed_review",
                "written"
            ]
        );
        assert_eq!(
            (
                &last["written"],
                &last["reason"],
                &last["review_reason"],
                &last["citation"]
            ),
            (
                &json!(false),
                &json!(ADMIT),
                &json!(review_reason),
                &Value::Null
            ),
            "{case}"
        );
        assert!(
            last["refusal"]
                .as_str()
                .unwrap()
                .starts_with(&format!("{review_reason} (")),
            "{case}: {last}"
        );
        // Waiving the same-seed review never waives where the rows come from.
        if review_reason == FOREIGN {
            let run = p.cite(
                &["r.json"],
                &["--expires-at", FUTURE, "--waive-same-seed-review"],
            );
            assert_eq!(run.code, 1, "{case}: {}", run.stdout);
            assert!(
                run.stdout
                    .contains(&format!("citation refused: {FOREIGN} (")),
                "{case}: {}",
                run.stdout
            );
        }
        assert!(p.store().is_empty(), "{case}");
    }
}

/// An open receipt that no longer matches the work tree (older code, another fixture) is
/// retired: it neither counts as evidence nor disables the freeze path.
#[test]
fn cite_an_open_receipt_of_older_code_or_fixture_does_not_refuse() {
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    p.admitted_pair();
    let open = json!({"attempted_seeds": [1101, 1102], "stopped_early": true});
    p.receipt("old-open.json", edit(open.clone(), json!({"code": p.old})));
    p.receipt(
        "moved-open.json",
        edit(
            open,
            json!({"fixture_hash": format!("sha256:{}", "0".repeat(64))}),
        ),
    );
    let run = p.cite(
        &["r.json", "old-open.json", "moved-open.json"],
        &["--expires-at", FUTURE],
    );
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert_eq!(p.store().len(), 1);
    for needle in [
        "receipt `old-open.json` (patch `agent-1842`",
        "early_stop_incomplete, retired (diff changed): not counted as evidence",
        "receipt `moved-open.json` (patch `agent-1842`",
        "early_stop_incomplete, retired (fixture changed): not counted as evidence",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
}

/// Outside a git work tree the code identity cannot be computed, so no receipt can be
/// matched to the work tree's code: refused, never guessed.
#[test]
fn cite_outside_a_git_work_tree_is_refused() {
    let dir = Dir::new();
    let code = format!("commit:{}", "1".repeat(40));
    dir.evidence("r.json", json!({"code": code}));
    dir.write_rows(
        "w.jsonl",
        &[
            own_row(&dir, "r.json", FAILING),
            edit(
                dir.row_on(FAILING, "w-remote-9", "pass", "ok", "remote"),
                json!({"patch_id": PATCH, "code": code}),
            ),
        ],
    );
    let run = dir.run(&[
        "gate",
        "cite",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
        "--receipts",
        "r.json",
        "--expires-at",
        FUTURE,
    ]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout.ends_with(&format!(
            "citation refused: {NO_ELIGIBLE}; 1 retired: `r.json` cannot be matched: the work tree's code identity is unknown\n"
        )),
        "{}",
        run.stdout
    );
    assert!(!dir.exists(STORE));
}

/// (case, receipts, extra flags, what stderr names)
type InputErrorCase<'a> = (String, Vec<&'a str>, Vec<&'a str>, Vec<String>);

#[test]
fn cite_input_errors_exit_2_and_write_nothing() {
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    p.admitted_pair();
    p.receipt("p2.json", json!({"patch_id": "agent-7"}));
    p.receipt("anon.json", json!({"patch_id": null}));
    p.dir.write("broken.json", "{\n  \"patch_id\": \n");
    p.dir.write("not-a-dir", "a file\n");
    let mut cases: Vec<InputErrorCase> = Vec::new();
    // Expiries that are not RFC 3339 times, or not in the future.
    for expiry in [
        "2001-01-01T00:00:00Z",
        "1970-01-01T00:00:00Z",
        "tomorrow",
        "2999-01-01",
        "2999-01-01T00:00:00",
        "2999-02-30T00:00:00Z",
        "2999-13-01T00:00:00Z",
        "2999-01-01T00:00:00+2:00",
        "２９９９-01-01T00:00:00Z",
    ] {
        let why = if expiry.starts_with("2999") || expiry.starts_with('２') || expiry == "tomorrow"
        {
            "is not an RFC 3339 time"
        } else {
            "is not in the future"
        };
        cases.push((
            format!("expiry {expiry}"),
            vec!["r.json"],
            vec!["--expires-at", expiry],
            vec![format!("expiry `{expiry}` {why}")],
        ));
    }
    let fut = vec!["--expires-at", FUTURE];
    let with = |extra: &[&'static str]| {
        let mut args = fut.clone();
        args.extend(extra);
        args
    };
    cases.extend([
        (
            "receipts of two patches".to_string(),
            vec!["r.json", "p2.json"],
            fut.clone(),
            vec!["the receipts belong to 2 patches: `agent-1842`, `agent-7`".to_string()],
        ),
        (
            "a receipt without a patch_id".to_string(),
            vec!["r.json", "anon.json"],
            fut.clone(),
            vec!["receipt `anon.json`: field `patch_id`".to_string()],
        ),
        (
            "receipts that are not JSON or missing, all named".to_string(),
            vec!["r.json", "broken.json", "missing.json"],
            fut.clone(),
            vec![
                "receipt `broken.json`: not JSON: line 3".to_string(),
                "cannot read receipt `missing.json`".to_string(),
            ],
        ),
        (
            "no receipt at all".to_string(),
            vec![],
            fut.clone(),
            vec!["--receipts <FILE>".to_string()],
        ),
        (
            "a missing witness file".to_string(),
            vec!["r.json"],
            with(&["--witnesses", "w.jsonl", "missing.jsonl"]),
            vec!["cannot read witness file `missing.jsonl`".to_string()],
        ),
        (
            "a missing fixture".to_string(),
            vec!["r.json"],
            with(&["--fixture", "fixtures/none.json"]),
            vec!["fixtures/none.json".to_string()],
        ),
        (
            "a root without the spec".to_string(),
            vec!["r.json"],
            with(&["--root", "nowhere"]),
            vec!["nowhere/props/order_total_nonneg.md".to_string()],
        ),
        (
            "a store that is a file".to_string(),
            vec!["r.json"],
            with(&["--store", "not-a-dir"]),
            vec!["freeze store `not-a-dir`".to_string()],
        ),
        (
            "a store under a file".to_string(),
            vec!["r.json"],
            with(&["--store", "not-a-dir/freezes"]),
            vec!["freeze store `not-a-dir/freezes`".to_string()],
        ),
    ]);
    let before = tree(&p.dir);
    for (case, receipts, extra, needles) in cases {
        let run = p.cite(&receipts, &extra);
        assert_eq!(run.code, 2, "{case}: {}", run.stderr);
        assert_eq!(run.stdout, "", "{case}");
        for needle in needles {
            assert!(
                run.stderr.contains(&needle),
                "{case}: {needle}: {}",
                run.stderr
            );
        }
        assert!(!run.stderr.contains("panicked"), "{case}");
        assert_eq!(tree(&p.dir), before, "{case}: nothing written");
        assert!(!p.dir.exists(STORE), "{case}: no store created");
    }
    assert_eq!(p.dir.read("not-a-dir"), "a file\n");
}

/// `witness_id` of a row.
fn id_of(row: &Value) -> &str {
    row["witness_id"].as_str().unwrap()
}

/// `row` with its verdict (and signature) the other way round.
fn flipped(row: &Value) -> Value {
    let (verdict, signature) = if row["verdict"] == "fail" {
        ("pass", "ok")
    } else {
        ("fail", "AssertionError")
    };
    edit(
        row.clone(),
        json!({"verdict": verdict, "signature": signature}),
    )
}

/// A deterministic bug fails on its seed wherever it runs: no pass shares the failing seed,
/// and the same-seed review refuses. A local row carries no signature, so only the rows a
/// receipt's own run wrote beside it count: a hand-made local pass on the failing seed (a
/// fresh id, one claiming the receipt's run, the run's own id with the verdict flipped, a
/// copy of the run's witness file with a row flipped) backs nothing, and the citation is
/// refused with the same-seed reason. Nothing is written.
#[test]
fn cite_a_hand_made_local_row_backs_nothing() {
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    // The run of `r.json`: passes on 1101, 1102, 1104, fails on 1103.
    let run: Vec<Value> = (1101..=1104).map(|seed| p.own("r.json", seed)).collect();
    assert_eq!(
        run.iter()
            .map(|r| (id_of(r), r["verdict"].as_str().unwrap()))
            .collect::<Vec<_>>(),
        [
            ("run-r-1101", "pass"),
            ("run-r-1102", "pass"),
            ("run-r-1103", "fail"),
            ("run-r-1104", "pass"),
        ]
    );
    // The remote replays agree: a fail on 1103, a pass on 1104.
    let remote = vec![
        p.row("w-remote-7", FAILING, "fail", "remote"),
        p.row("w-remote-9", 1104, "pass", "remote"),
    ];
    let with_remote = |local: Vec<Value>| -> Vec<Value> { [local, remote.clone()].concat() };
    let hand_made = p.row("w-local-1", FAILING, "pass", "local");
    let mut one_flipped = run.clone();
    one_flipped[2] = flipped(&run[2]);
    assert_eq!(
        (id_of(&one_flipped[2]), &one_flipped[2]["verdict"]),
        ("run-r-1103", &json!("pass"))
    );
    // A copy of the run's witness file with its pass on 1104 flipped to a fail (a remote
    // pass on 1104 is in the batch).
    let copy: String = p
        .dir
        .read("order_total_nonneg.witness.jsonl")
        .lines()
        .map(|l| {
            let row: Value = serde_json::from_str(l).unwrap();
            let row = if id_of(&row) == "run-r-1104" {
                flipped(&row)
            } else {
                row
            };
            format!("{row}\n")
        })
        .collect();
    p.dir.write("copy.jsonl", &copy);
    assert!(copy.contains("\"witness_id\":\"run-r-1104\""), "{copy}");
    // (case, rows of `w.jsonl`, further witness files)
    let cases: Vec<(&str, Vec<Value>, &[&str])> = vec![
        ("the deterministic bug alone", with_remote(run.clone()), &[]),
        (
            "a hand-made local pass on the failing seed",
            with_remote([run.clone(), vec![hand_made.clone()]].concat()),
            &[],
        ),
        (
            "a hand-made local pass on the failing seed claiming the receipt's run",
            with_remote(
                [
                    run.clone(),
                    vec![edit(
                        hand_made.clone(),
                        json!({"witness_id": "run-r-1103-again", "run_id": "run-r"}),
                    )],
                ]
                .concat(),
            ),
            &[],
        ),
        (
            "the run's own row on the failing seed with its verdict flipped",
            with_remote(one_flipped),
            &[],
        ),
        (
            "a copy of the run's witness file with one row flipped",
            remote.clone(),
            &["--witnesses", "copy.jsonl"],
        ),
    ];
    let fut = ["--expires-at", FUTURE];
    for (case, rows, extra) in cases {
        p.dir.write_rows("w.jsonl", &rows);
        let before = tree(&p.dir);
        let args = [&fut[..], extra].concat();
        let run = p.cite(&["r.json"], &args);
        assert_eq!(run.code, 1, "{case}: {}\n{}", run.stdout, run.stderr);
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 5, "{case}: {}", run.stdout);
        assert_eq!((lines[0], lines[3]), (ADMIT, REVIEW_REFUSED), "{case}");
        assert!(
            lines[4].starts_with(&format!("citation refused: {NO_SAME_SEED} (")),
            "{case}: {}",
            run.stdout
        );
        let json_args = [&args[..], &["--format", "json"]].concat();
        let run = p.cite(&["r.json"], &json_args);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        let mut last = json_lines(&run.stdout).pop().unwrap();
        let refusal = last["refusal"].take();
        assert!(
            refusal
                .as_str()
                .unwrap()
                .starts_with(&format!("{NO_SAME_SEED} (")),
            "{case}: {refusal}"
        );
        for key in ["fail_id", "pass_id"] {
            assert!(last[key].is_string(), "{case}: {last}");
            last[key] = Value::Null;
        }
        assert_eq!(
            last,
            json!({
                "written": false,
                "reason": ADMIT,
                "refusal": null,
                "review_reason": NO_SAME_SEED,
                "flake": null,
                "citation": null,
                "fail_id": null,
                "pass_id": null,
                "same_seed_review": review_json_refused(),
                "roles": "unauthenticated",
            }),
            "{case}"
        );
        assert!(p.store().is_empty(), "{case}");
        assert_eq!(tree(&p.dir), before, "{case}: nothing written");
    }
    // The control: the remote runner passes the failing seed (the failure depends on the
    // environment) — no remote fail on it — beside the same run's rows: cited, with the run's
    // own fail.
    p.dir.write_rows(
        "w.jsonl",
        &[
            run.clone(),
            vec![
                p.row("w-remote-8", FAILING, "pass", "remote"),
                p.row("w-remote-9", 1104, "pass", "remote"),
            ],
        ]
        .concat(),
    );
    let run = p.cite(&["r.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains(&review_passed("run-r-1103", "w-remote-8", 1103)),
        "{}",
        run.stdout
    );
    assert_eq!(p.store().len(), 1);
}

/// The stdout prefix of a refusal for rows of runs without a receipt, up to the run ids.
const WITHOUT_RECEIPT: &str = "citation refused: witness rows of run(s) ";
/// What follows the run ids.
const WITHOUT_RECEIPT_TAIL: &str = " have no receipt among the patch's receipts: ";

/// The run ids a runs-without-receipt refusal `line` names, sorted.
fn runs_named(line: &str) -> Vec<String> {
    let rest = line
        .strip_prefix(WITHOUT_RECEIPT)
        .unwrap_or_else(|| panic!("not a runs-without-receipt refusal: {line}"));
    let (ids, _) = rest
        .split_once(WITHOUT_RECEIPT_TAIL)
        .unwrap_or_else(|| panic!("not a runs-without-receipt refusal: {line}"));
    let mut ids: Vec<String> = ids.split(", ").map(str::to_string).collect();
    ids.sort();
    ids
}

/// Local rows of the patch of a run whose receipt is not among the receipts given (nor
/// beside them) refuse the citation: in a witness file beside a receipt (an earlier run,
/// killed, whose open receipt was left behind), or offered in `--witnesses`. Replays and
/// rows of other patches do not.
#[test]
fn cite_refuses_rows_of_a_run_whose_receipt_is_not_given() {
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    let beside = "order_total_nonneg.witness.jsonl";
    // The receipt copied alone into `copy/`, beside a witness file holding the rows of an
    // earlier run of the patch, killed after two seeds, before the copied run's rows.
    let killed: String = [1101, 1102]
        .iter()
        .map(|&seed| {
            let row = edit(
                p.own("r.json", seed),
                json!({"witness_id": format!("run-killed-{seed}"), "run_id": "run-killed"}),
            );
            format!("{row}\n")
        })
        .collect();
    p.dir.write("copy/r.json", p.dir.read("r.json"));
    p.dir
        .write(&format!("copy/{beside}"), killed + &p.dir.read(beside));
    let pair = vec![
        p.own("r.json", FAILING),
        p.row("w-remote-9", FAILING, "pass", "remote"),
    ];
    // A pass of another run of the patch at its code, offered in the batch.
    let other = edit(
        p.own("r.json", 1102),
        json!({"witness_id": "run-other-1102", "run_id": "run-other"}),
    );
    let with_other = [pair.clone(), vec![other.clone()]].concat();
    // (case, rows of `w.jsonl`, receipt, runs named)
    let cases: [(&str, &[Value], &str, &[&str]); 3] = [
        (
            "a killed run's rows beside the receipt",
            &pair,
            "copy/r.json",
            &["run-killed"],
        ),
        (
            "a row of another run in the batch",
            &with_other,
            "r.json",
            &["run-other"],
        ),
        (
            "both",
            &with_other,
            "copy/r.json",
            &["run-killed", "run-other"],
        ),
    ];
    for (case, rows, receipt, runs) in cases {
        p.dir.write_rows("w.jsonl", rows);
        let before = tree(&p.dir);
        let run = p.cite(&[receipt], &["--expires-at", FUTURE]);
        assert_eq!(run.code, 1, "{case}: {}\n{}", run.stdout, run.stderr);
        let lines: Vec<&str> = run.stdout.lines().collect();
        assert_eq!(lines.len(), 5, "{case}: {}", run.stdout);
        assert_eq!(
            &lines[..4],
            [
                ADMIT,
                "fail_id: run-r-1103",
                "pass_id: w-remote-9",
                "same-seed review: not reached (the citation was refused before it)",
            ],
            "{case}"
        );
        assert_eq!(runs_named(lines[4]), runs, "{case}: {}", lines[4]);
        let run = p.cite(&[receipt], &["--expires-at", FUTURE, "--format", "json"]);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        let mut last = json_lines(&run.stdout).pop().unwrap();
        let refusal = last["refusal"].take();
        assert_eq!(
            runs_named(&format!("citation refused: {}", refusal.as_str().unwrap())),
            runs,
            "{case}: {refusal}"
        );
        assert_eq!(
            last,
            json!({
                "written": false,
                "reason": ADMIT,
                "refusal": null,
                "review_reason": null,
                "flake": null,
                "citation": null,
                "fail_id": "run-r-1103",
                "pass_id": "w-remote-9",
                "same_seed_review": null,
                "roles": "unauthenticated",
            }),
            "{case}"
        );
        assert!(p.store().is_empty(), "{case}");
        assert_eq!(tree(&p.dir), before, "{case}: nothing written");
    }
    // The control: the receipt where its run wrote its rows (and only those) is cited from
    // the same pair; a local replay of the patch and another patch's run in the batch do
    // not refuse.
    let replay = edit(
        p.row("replay-local-1101", 1101, "pass", "local"),
        json!({"run_id": "replay-local-1"}),
    );
    let foreign = edit(other, json!({"patch_id": "agent-7"}));
    p.dir
        .write_rows("w.jsonl", &[pair, vec![replay, foreign]].concat());
    let run = p.cite(&["r.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout
            .contains(&review_passed("run-r-1103", "w-remote-9", 1103)),
        "{}",
        run.stdout
    );
    assert_eq!(p.store().len(), 1);
}

/// One run's receipt and rows copied into a second evidence directory: two receipts of one
/// run refuse (exit 1); the copy's rows edited (a field no receipt records, so each receipt
/// still agrees with its rows) is the evidence edited (exit 2), whichever form the rows are
/// read in.
#[test]
fn cite_refuses_one_runs_rows_copied_and_edited_beside_another_receipt() {
    let p = Patch::new();
    p.receipt("a/r.json", json!({}));
    p.dir.write_rows(
        "w.jsonl",
        &[
            own_row(&p.dir, "a/r.json", FAILING),
            p.row("w-remote-9", FAILING, "pass", "remote"),
        ],
    );
    let witnesses = "order_total_nonneg.witness.jsonl";
    p.dir.write("b/r.json", p.dir.read("a/r.json"));
    p.dir.write(
        &format!("b/{witnesses}"),
        p.dir.read(&format!("a/{witnesses}")),
    );
    let run = p.cite(&["a/r.json", "b/r.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert!(
        run.stdout
            .contains("citation refused: two receipts name run `run-a-r`: a run has one receipt"),
        "{}",
        run.stdout
    );
    assert!(
        !run.stderr.contains("the evidence was edited"),
        "{}",
        run.stderr
    );

    let rows = p.dir.read(&format!("b/{witnesses}"));
    let mut lines: Vec<Value> = rows
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let edited = id_of(&lines[1]).to_string();
    lines[1]["replayed_signature"] = json!("AssertionError");
    p.dir.write_rows(&format!("b/{witnesses}"), &lines);
    let run = p.cite(&["a/r.json", "b/r.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert_eq!(run.stdout, "");
    assert!(
        run.stderr.contains(&format!(
            "error: two runs wrote rows named `{edited}`; witness ids are unique, so the evidence was edited"
        )),
        "{}",
        run.stderr
    );
    assert!(!p.dir.exists(STORE), "nothing written");
}

/// `n` remote replay rows of [`FAILING`] (`attempt` 1..=n, as `prop reproduce --repeat n`
/// writes them), the first `fails` failing with the run's signature, the rest passing.
fn remote_replays(p: &Patch, n: u32, fails: u32) -> Vec<Value> {
    (1..=n)
        .map(|attempt| {
            let verdict = if attempt <= fails { "fail" } else { "pass" };
            edit(
                p.row(&format!("replay-{attempt}"), FAILING, verdict, "remote"),
                json!({"attempt": attempt, "replayed_signature": "AssertionError"}),
            )
        })
        .collect()
}

/// SPEC "Flake rate": a seed the remote runner replayed 20 times, failing on 6, is flaky —
/// its runner disagrees with itself, which the review leaves to the rate — and is cited with
/// its class and interval recorded; `gate cite` says which class it froze, `gate freezes`
/// lists it. A seed that fails on every replay is refused with SPEC's reason, nothing
/// written.
#[test]
fn cite_records_the_flake_rate_and_refuses_a_seed_failing_on_every_replay() {
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    let mut rows = vec![p.own("r.json", FAILING)];
    rows.extend(remote_replays(&p, 20, 6));
    p.dir.write_rows("w.jsonl", &rows);
    let run = p.cite(&["r.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
    let [lo, hi] = seedledger_format::flake::clopper_pearson(6, 20)
        .unwrap()
        .outward(4);
    let said = format!(
        "flake rate of seed {FAILING}: flaky: remote 6/20 failed [{lo}, {hi}] (frozen as flaky)"
    );
    assert!(run.stdout.contains(&said), "{}", run.stdout);
    let names = p.store();
    assert_eq!(names.len(), 1, "{names:?}");
    let citation: Value =
        serde_json::from_str(&p.dir.read(&format!("{STORE}/{}", names[0]))).unwrap();
    assert_eq!(citation["schema_version"], 3);
    assert_eq!(
        citation["flake"],
        json!({"class": "flaky", "seed": FAILING, "runners": {"remote": {"replays": 20, "fails": 6, "interval": [lo, hi]}}})
    );
    assert_eq!(citation["pass_id"], "replay-7");
    // Listed with its rate, in both forms.
    let listed = p.dir.run(&["gate", "freezes"]);
    assert!(
        listed.stdout.contains(&format!(
            "flake rate flaky: remote 6/20 failed [{lo}, {hi}]"
        )),
        "{}",
        listed.stdout
    );
    let listed = p.dir.run(&["gate", "freezes", "--format", "json"]);
    let line: Value = serde_json::from_str(listed.stdout.trim()).unwrap();
    assert_eq!(line["flake"], citation["flake"]);

    // A deterministic seed: a remote pass that is not a replay pairs with the local fail, but
    // all 20 replays fail: refused, with SPEC's reason, and nothing written.
    let p = Patch::new();
    p.receipt("r.json", json!({}));
    let mut rows = vec![
        p.own("r.json", FAILING),
        p.row("w-remote-9", FAILING, "pass", "remote"),
    ];
    rows.extend(remote_replays(&p, 20, 20));
    p.dir.write_rows("w.jsonl", &rows);
    let run = p.cite(&["r.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 1, "{}\n{}", run.stdout, run.stderr);
    assert!(
        run.stdout.contains(&format!(
            "citation refused: the failing seed fails on every replay: a bug, not a flake (seed {FAILING}: deterministic: remote 20/20 failed [0.8315, 1.0000])"
        )),
        "{}",
        run.stdout
    );
    assert!(p.store().is_empty());
    let run = p.cite(&["r.json"], &["--expires-at", FUTURE, "--format", "json"]);
    let last: Value = serde_json::from_str(run.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(last["written"], false);
    assert!(
        last["refusal"]
            .as_str()
            .unwrap()
            .starts_with("the failing seed fails on every replay: a bug, not a flake"),
        "{last}"
    );
}

/// A run's evidence is written without waiting for the disk; `gate cite` makes what it
/// cites durable before it writes the citation: every receipt it read, the witness file
/// beside each, the batch and their directory are synced, and only then the citation's
/// temporary file and the store's directory. A refused cite syncs nothing.
#[test]
fn cite_syncs_the_evidence_it_cites_before_the_citation() {
    let p = Patch::new();
    p.citable();
    let logs = tempfile::tempdir().unwrap();
    let log = logs.path().join("synced.log");
    let log_env = [("SEEDLEDGER_TEST_SYNC_LOG", log.to_str().unwrap())];
    // Refused (no expiry): nothing is synced, nothing written.
    let refused = p.cite_env(&["r.json"], &[], &log_env);
    assert_ne!(refused.code, 0, "{}", refused.stdout);
    assert!(p.store().is_empty());
    assert_eq!(std::fs::read_to_string(&log).unwrap_or_default(), "");

    let run = p.cite_env(&["r.json"], &["--expires-at", FUTURE], &log_env);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let names = p.store();
    assert_eq!(names.len(), 1, "{names:?}");
    let synced = std::fs::read_to_string(&log).unwrap();
    let synced: Vec<&str> = synced.lines().collect();
    let (evidence, citation) = synced.split_at(synced.len() - 2);
    assert_eq!(
        evidence,
        [
            "file order_total_nonneg.witness.jsonl",
            "file r.json",
            "file w.jsonl",
            "dir .",
        ],
        "{synced:?}"
    );
    // The citation's temporary file, in the store (named as the temporary file says it).
    let tmp = format!("{}/.seedledger-", p.dir.path().join(STORE).display());
    assert!(
        citation[0].starts_with(&format!("file {tmp}")) && citation[0].ends_with(".tmp"),
        "{synced:?}"
    );
    assert_eq!(citation[1], format!("dir {STORE}"));
}
