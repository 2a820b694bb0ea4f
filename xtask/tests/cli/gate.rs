//! `cargo xtask gate ...` end to end: the real `xtask` binary, run in a temporary workspace,
//! checked for exit codes, output lines and JSON line shapes.

use assert_cmd::Command;
use serde_json::{Value, json};
use std::path::Path;

/// A temporary workspace root with a spec, its fixture and helpers to run `xtask` in it.
struct Dir {
    tmp: tempfile::TempDir,
}

struct Run {
    code: i32,
    stdout: String,
    stderr: String,
}

const SPEC: &str = "---\nproperty_id: order_total_nonneg\nbound: total>=0\nfixture: fixtures/order.json\noracle_source: human_reviewed\n---\nAn order's total is never negative.\n";
const FIXTURE: &str = "{\"lines\": [{\"sku\": \"a\", \"qty\": 2, \"price\": 150}]}\n";

impl Dir {
    fn new() -> Dir {
        let dir = Dir {
            tmp: tempfile::tempdir().unwrap(),
        };
        dir.write("props/order_total_nonneg.md", SPEC);
        dir.write("fixtures/order.json", FIXTURE);
        dir
    }

    fn path(&self) -> &Path {
        self.tmp.path()
    }

    fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    fn run(&self, args: &[&str]) -> Run {
        let out = Command::new(env!("CARGO_BIN_EXE_xtask"))
            .args(args)
            .current_dir(self.path())
            .output()
            .unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    fn digest(&self) -> String {
        seedledger_format::property_digest(SPEC.as_bytes())
    }

    fn pin(&self) -> String {
        seedledger_format::fixture_pin(FIXTURE.as_bytes())
    }

    /// A witness row bound to this workspace's spec and fixture.
    fn row(&self, id: &str, verdict: &str, signature: &str, runner: &str) -> Value {
        json!({
            "witness_id": id,
            "property_id": "order_total_nonneg",
            "property_digest": self.digest(),
            "fixture_pin": self.pin(),
            "bound": "total>=0",
            "seed": 17,
            "verdict": verdict,
            "signature": signature,
            "runner": runner,
            "freeze_writer": false
        })
    }

    fn write_rows(&self, rel: &str, rows: &[Value]) {
        let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
        self.write(rel, text);
    }

    /// The seed document's admitted pair, in `w.jsonl`.
    fn admitted_pair(&self) {
        self.write_rows(
            "w.jsonl",
            &[
                self.row("w-local-1", "fail", "AssertionError", "local"),
                self.row("w-remote-9", "pass", "ok", "remote"),
            ],
        );
    }

    /// A receipt for this workspace's fixture, with `changes` applied.
    fn receipt(&self, rel: &str, changes: Value) {
        let mut r = json!({
            "patch_id": "agent-1842",
            "property_id": "order_total_nonneg",
            "planned_seeds": [1101, 1102, 1103, 1104],
            "attempted_seeds": [1101, 1102, 1103, 1104],
            "failing_seed": 1103,
            "shrink_stable": true,
            "fixture_hash": format!("sha256:{}", self.pin()),
            "stopped_early": false,
            "oracle_source": "human_reviewed"
        });
        for (k, v) in changes.as_object().unwrap() {
            r[k] = v.clone();
        }
        self.write(rel, serde_json::to_string_pretty(&r).unwrap());
    }

    fn files(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![self.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.is_dir() {
                    stack.push(path);
                } else {
                    out.push(path.display().to_string());
                }
            }
        }
        out.sort();
        out
    }
}

fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

// ---------------------------------------------------------------------------------------
// pin / digest

#[test]
fn pin_and_digest_match_the_format_crate() {
    let dir = Dir::new();
    let run = dir.run(&["gate", "pin", "fixtures/order.json"]);
    assert_eq!((run.code, run.stdout.trim()), (0, dir.pin().as_str()));
    let run = dir.run(&["gate", "digest", "props/order_total_nonneg.md"]);
    assert_eq!((run.code, run.stdout.trim()), (0, dir.digest().as_str()));
    // The empty file's pin, computed independently with sha256sum.
    dir.write("empty", "");
    let run = dir.run(&["gate", "pin", "empty"]);
    assert_eq!(
        run.stdout.trim(),
        "c90b5a8d0d6cc502266b53f3b2b03bd97b35679f770f94b31563b468bda63543"
    );
}

#[test]
fn pin_and_digest_of_a_missing_file_exit_2() {
    let dir = Dir::new();
    for cmd in ["pin", "digest"] {
        let run = dir.run(&["gate", cmd, "no/such/file"]);
        assert_eq!(run.code, 2, "{cmd}");
        assert!(run.stdout.is_empty());
        assert!(run.stderr.contains("no/such/file"), "{}", run.stderr);
    }
}

// ---------------------------------------------------------------------------------------
// close

#[test]
fn close_eligible_receipt_exits_0() {
    let dir = Dir::new();
    dir.receipt("r.json", json!({}));
    let run = dir.run(&["gate", "close", "r.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout, "r.json: freeze_eligible\n");
}

#[test]
fn close_reaches_every_status_and_exits_1() {
    let dir = Dir::new();
    let table = [
        (
            "01.json",
            json!({"planned_seeds": null}),
            "incomplete_fields",
        ),
        ("02.json", json!({"planned_seeds": []}), "empty_plan"),
        (
            "03.json",
            json!({"attempted_seeds": [1101, 1102], "stopped_early": true}),
            "early_stop_incomplete",
        ),
        (
            "04.json",
            json!({"attempted_seeds": [1101, 1102]}),
            "seed_gap",
        ),
        (
            "05.json",
            json!({"failing_seed": null}),
            "budget_pass_no_freeze",
        ),
        ("06.json", json!({"failing_seed": 7}), "seed_mismatch"),
        (
            "07.json",
            json!({"oracle_source": "model_draft"}),
            "oracle_unreviewed",
        ),
        (
            "08.json",
            json!({"shrink_stable": false}),
            "shrink_unstable",
        ),
        (
            "09.json",
            json!({"fixture_hash": "sha256:9c1e"}),
            "fixture_unbound",
        ),
        ("10.json", json!({}), "freeze_eligible"),
    ];
    let mut args = vec!["gate", "close", "--format", "json"];
    for (file, changes, _) in &table {
        dir.receipt(file, changes.clone());
        args.push(file);
    }
    let run = dir.run(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    assert_eq!(lines.len(), table.len());
    for (line, (file, _, status)) in lines.iter().zip(&table) {
        assert_eq!(line["file"], json!(file));
        assert_eq!(line["status"], json!(status));
        assert_eq!(keys(line), ["detail", "file", "status"]);
        assert!(!line["detail"].as_str().unwrap().is_empty());
    }
    // Human output: `<file>: <status>`, with why when not eligible.
    let run = dir.run(&["gate", "close", "04.json", "10.json"]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "04.json: seed_gap (attempted 2 of 4 planned seeds; first not attempted: 1103)\n10.json: freeze_eligible\n"
    );
}

#[test]
fn close_names_the_bad_field_and_its_line() {
    let dir = Dir::new();
    dir.write(
        "r.json",
        "{\n  \"planned_seeds\": [1101, 1102.0],\n  \"attempted_seeds\": [1101]\n}\n",
    );
    let run = dir.run(&["gate", "close", "r.json"]);
    assert_eq!(run.code, 1);
    assert!(
        run.stdout.starts_with("r.json: incomplete_fields ("),
        "{}",
        run.stdout
    );
    assert!(run.stdout.contains("line 2"), "{}", run.stdout);
    assert!(run.stdout.contains("planned_seeds[1]"), "{}", run.stdout);
    // A JSON value that is not an object is incomplete_fields, not an input error.
    dir.write("list.json", "[1, 2]");
    let run = dir.run(&["gate", "close", "list.json"]);
    assert_eq!(run.code, 1);
    assert!(run.stdout.starts_with("list.json: incomplete_fields"));
}

#[test]
fn close_not_json_exits_2_naming_file_and_position_and_still_closes_the_rest() {
    let dir = Dir::new();
    dir.receipt("good.json", json!({}));
    dir.receipt("open.json", json!({"stopped_early": true}));
    dir.write("broken.json", "{\n  \"planned_seeds\": [1,\n  ]\n}\n");
    let run = dir.run(&["gate", "close", "broken.json", "good.json", "open.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("broken.json"), "{}", run.stderr);
    assert!(run.stderr.contains("line 3, column 3"), "{}", run.stderr);
    assert_eq!(
        run.stdout.lines().collect::<Vec<_>>(),
        [
            "good.json: freeze_eligible",
            "open.json: early_stop_incomplete (stopped_early is true: the run stopped after attempting 4 of 4 planned seeds)"
        ]
    );
    let run = dir.run(&[
        "gate",
        "close",
        "--format",
        "json",
        "good.json",
        "broken.json",
    ]);
    assert_eq!(run.code, 2);
    let lines = json_lines(&run.stdout);
    assert_eq!(lines[0]["status"], json!("freeze_eligible"));
    assert_eq!(lines[1]["file"], json!("broken.json"));
    assert_eq!(lines[1]["status"], Value::Null);
    assert!(lines[1]["error"].as_str().unwrap().contains("line 3"));
    // Not UTF-8, empty, truncated: all input errors, never a panic.
    dir.write("binary.json", b"{\"a\": \"\xff\xfe\"}");
    dir.write("empty.json", "");
    dir.write("cut.json", "{\"planned_seeds\": [1");
    for file in ["binary.json", "empty.json", "cut.json"] {
        let run = dir.run(&["gate", "close", file]);
        assert_eq!(run.code, 2, "{file}");
        assert!(
            run.stderr.contains(file) && run.stderr.contains("line 1"),
            "{}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"));
    }
}

#[test]
fn close_missing_file_exits_2() {
    let dir = Dir::new();
    dir.receipt("good.json", json!({}));
    let run = dir.run(&["gate", "close", "missing.json", "good.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("missing.json"), "{}", run.stderr);
    assert_eq!(run.stdout, "good.json: freeze_eligible\n");
}

// ---------------------------------------------------------------------------------------
// decide

#[test]
fn decide_admits_the_seed_documents_pair() {
    let dir = Dir::new();
    dir.admitted_pair();
    let before = dir.files();
    let args = [
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
    ];
    let run = dir.run(&args);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "stable signature across opposite verdicts\nfail_id: w-local-1\npass_id: w-remote-9\n"
    );
    let mut json_args = args.to_vec();
    json_args.extend(["--format", "json"]);
    let run = dir.run(&json_args);
    assert_eq!(run.code, 0);
    let last = json_lines(&run.stdout).pop().unwrap();
    assert_eq!(
        last,
        json!({
            "admit": true,
            "reason": "stable signature across opposite verdicts",
            "fail_id": "w-local-1",
            "pass_id": "w-remote-9"
        })
    );
    // It writes nothing.
    assert_eq!(dir.files(), before);
}

#[test]
fn decide_refusals_exit_1_with_the_reason() {
    let dir = Dir::new();
    let mut minting = dir.row("w-remote-bad", "pass", "ok", "remote");
    minting["freeze_writer"] = json!(true);
    let cases = [
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                minting,
            ],
            "remote witness w-remote-bad attempted to mint",
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                dir.row("w-remote-9", "pass", "ok", "remote"),
                dir.row("w-local-2", "fail", "KeyError", "local"),
            ],
            "fail signature is not stable",
        ),
        (
            vec![dir.row("w-local-1", "fail", "AssertionError", "local")],
            "need two witnesses on the same pin, digest, and bound",
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                dir.row("w-remote-1", "fail", "AssertionError", "remote"),
            ],
            "opposite verdicts required",
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                dir.row("w-local-2", "pass", "ok", "local"),
            ],
            "need both a local witness and a remote witness",
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "ok", "local"),
                dir.row("w-remote-9", "pass", "ok", "remote"),
            ],
            "fail witness cannot carry an ok signature",
        ),
    ];
    for (rows, reason) in cases {
        dir.write_rows("w.jsonl", &rows);
        let args = [
            "gate",
            "decide",
            "--property",
            "order_total_nonneg",
            "--witnesses",
            "w.jsonl",
        ];
        let run = dir.run(&args);
        assert_eq!(run.code, 1, "{reason}: {}", run.stderr);
        assert_eq!(run.stdout, format!("{reason}\n"));
        let mut json_args = args.to_vec();
        json_args.extend(["--format", "json"]);
        let last = json_lines(&dir.run(&json_args).stdout).pop().unwrap();
        assert_eq!(
            last,
            json!({"admit": false, "reason": reason, "fail_id": null, "pass_id": null})
        );
    }
}

#[test]
fn decide_names_the_file_and_line_of_a_malformed_row() {
    let dir = Dir::new();
    dir.admitted_pair();
    dir.write(
        "more.jsonl",
        "\n{\"witness_id\": \"w-x\", \"runner\": \"cloud\"}\nnot json\n",
    );
    let run = dir.run(&[
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
        "more.jsonl",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "malformed witness w-x\n");
    assert!(
        run.stderr.contains("`more.jsonl`: line 2"),
        "{}",
        run.stderr
    );
    dir.write("more.jsonl", "\n\nnot json\n");
    let run = dir.run(&[
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
        "more.jsonl",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(run.stdout, "malformed witness line 3\n");
    assert!(
        run.stderr.contains("`more.jsonl`: line 3"),
        "{}",
        run.stderr
    );
}

#[test]
fn decide_computes_digest_and_pin_locally_never_from_the_rows() {
    let dir = Dir::new();
    dir.admitted_pair();
    let args = [
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
    ];
    // The fixture changed after the rows were written: the rows' pin no longer matches.
    dir.write("fixtures/order.json", "{\"lines\": []}\n");
    let run = dir.run(&args);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "need two witnesses on the same pin, digest, and bound\n"
    );
    assert!(run.stderr.contains("fixture_pin"), "{}", run.stderr);
    // The fixture is restored but the spec's prose changed: the digest no longer matches.
    dir.write("fixtures/order.json", FIXTURE);
    dir.write(
        "props/order_total_nonneg.md",
        format!("{SPEC}More prose.\n"),
    );
    let run = dir.run(&args);
    assert_eq!(run.code, 1);
    assert!(run.stderr.contains("property_digest"), "{}", run.stderr);
    dir.write("props/order_total_nonneg.md", SPEC);
    assert_eq!(dir.run(&args).code, 0);
}

#[test]
fn decide_flags_override_the_spec_defaults() {
    let dir = Dir::new();
    dir.admitted_pair();
    // The same spec and fixture elsewhere, named by flags, with a different root.
    dir.write("elsewhere/spec.md", SPEC);
    dir.write("elsewhere/fixture.json", FIXTURE);
    let base = [
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend(extra);
        dir.run(&args)
    };
    assert_eq!(
        with(&[
            "--spec",
            "elsewhere/spec.md",
            "--fixture",
            "elsewhere/fixture.json"
        ])
        .code,
        0
    );
    let run = with(&["--bound", "total>0"]);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (1, "need two witnesses on the same pin, digest, and bound\n")
    );
    assert_eq!(with(&["--bound", "total>=0"]).code, 0);
    // --root moves the defaults; the witness path stays relative to the current directory.
    dir.write("ws/props/order_total_nonneg.md", SPEC);
    dir.write("ws/fixtures/order.json", FIXTURE);
    assert_eq!(with(&["--root", "ws"]).code, 0);
    let run = with(&["--root", "nowhere"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("nowhere/props/order_total_nonneg.md"),
        "{}",
        run.stderr
    );
}

#[test]
fn decide_unreadable_input_exits_2() {
    let dir = Dir::new();
    dir.admitted_pair();
    let base = [
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--witnesses",
    ];
    let with = |extra: &[&str]| {
        let mut args = base.to_vec();
        args.extend(extra);
        dir.run(&args)
    };
    let run = with(&["w.jsonl", "missing.jsonl"]);
    assert_eq!(run.code, 2);
    assert!(run.stdout.is_empty());
    assert!(run.stderr.contains("missing.jsonl"), "{}", run.stderr);
    let run = with(&["w.jsonl", "--fixture", "fixtures/none.json"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("fixtures/none.json"), "{}", run.stderr);
    let run = with(&["w.jsonl", "--spec", "props/none.md"]);
    assert_eq!(run.code, 2);
    assert!(run.stderr.contains("props/none.md"), "{}", run.stderr);
    // A spec whose front matter is bad: file and line.
    dir.write(
        "props/order_total_nonneg.md",
        "---\nproperty_id: order_total_nonneg\nbound total>=0\n---\n",
    );
    let run = with(&["w.jsonl"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("props/order_total_nonneg.md"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("line 3"), "{}", run.stderr);
    // A spec for another property.
    dir.write(
        "props/order_total_nonneg.md",
        SPEC.replace("property_id: order_total_nonneg", "property_id: other"),
    );
    let run = with(&["w.jsonl"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("line 2") && run.stderr.contains("`other`"),
        "{}",
        run.stderr
    );
    // A property id that would escape props/.
    let run = dir.run(&[
        "gate",
        "decide",
        "--property",
        "../x",
        "--witnesses",
        "w.jsonl",
    ]);
    assert_eq!(run.code, 2);
}

#[test]
fn decide_an_empty_witness_file_is_a_refusal() {
    let dir = Dir::new();
    dir.write("w.jsonl", "");
    let run = dir.run(&[
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
    ]);
    assert_eq!(run.code, 1);
    assert_eq!(
        run.stdout,
        "need two witnesses on the same pin, digest, and bound\n"
    );
}

// ---------------------------------------------------------------------------------------
// cite

/// An expiry far enough ahead for every run of this suite.
const FUTURE: &str = "2999-01-01T00:00:00Z";

impl Dir {
    /// `gate cite` for the workspace's property over `w.jsonl`, writing `cite.json`, with
    /// `extra` appended.
    fn cite(&self, receipts: &[&str], extra: &[&str]) -> Run {
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
        args.extend(["--out", "cite.json"]);
        args.extend(extra);
        self.run(&args)
    }

    fn exists(&self, rel: &str) -> bool {
        self.path().join(rel).exists()
    }
}

#[test]
fn cite_writes_a_citation_on_an_admitted_batch_with_an_eligible_receipt() {
    let dir = Dir::new();
    dir.admitted_pair();
    dir.receipt("r.json", json!({}));
    dir.receipt(
        "other.json",
        json!({"property_id": "other", "failing_seed": null}),
    );
    let run = dir.cite(&["r.json", "other.json"], &["--expires-at", FUTURE]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "stable signature across opposite verdicts\nfail_id: w-local-1\npass_id: w-remote-9\ncitation written: cite.json\n"
    );
    let text = std::fs::read_to_string(dir.path().join("cite.json")).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    // Every field of `seedledger_format::Citation`, and nothing else.
    assert_eq!(
        keys(&value),
        [
            "bound",
            "expires_at",
            "fail_id",
            "fixture_pin",
            "pass_id",
            "patch_id",
            "property_digest",
            "property_id",
            "schema_version",
            "written_at"
        ]
    );
    let citation: seedledger_format::Citation = serde_json::from_value(value.clone()).unwrap();
    // written_at is now, `YYYY-MM-DDTHH:MM:SSZ`.
    let w = citation.written_at.as_bytes();
    assert_eq!(w.len(), 20, "{}", citation.written_at);
    assert_eq!((w[4], w[10], w[19]), (b'-', b'T', b'Z'));
    assert!(citation.written_at.as_str() > "2024" && citation.written_at.as_str() < FUTURE);
    // No temporary file is left beside it.
    assert_eq!(
        dir.files()
            .iter()
            .filter(|f| f.contains(".seedledger-"))
            .count(),
        0
    );

    // JSON: the last line; an expiry with an offset is written in UTC.
    std::fs::remove_file(dir.path().join("cite.json")).unwrap();
    let run = dir.cite(
        &["r.json"],
        &[
            "--expires-at",
            "2999-01-01T02:00:00.5+02:00",
            "--format",
            "json",
        ],
    );
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        json_lines(&run.stdout).pop().unwrap(),
        json!({
            "written": true,
            "reason": "stable signature across opposite verdicts",
            "refusal": null,
            "citation": "cite.json",
            "fail_id": "w-local-1",
            "pass_id": "w-remote-9"
        })
    );
    let value: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("cite.json")).unwrap())
            .unwrap();
    assert_eq!(value["expires_at"], json!(FUTURE));
}

/// (case, receipts, extra flags, local-only witnesses?, decision reason, cite refusal)
type RefusalCase<'a> = (
    &'a str,
    &'a [&'a str],
    &'a [&'a str],
    bool,
    &'a str,
    &'a str,
);

#[test]
fn cite_refusals_exit_1_with_the_reason_and_write_nothing() {
    const ADMIT: &str = "stable signature across opposite verdicts";
    let dir = Dir::new();
    dir.receipt("r.json", json!({}));
    dir.receipt(
        "open.json",
        json!({"attempted_seeds": [1101, 1102], "stopped_early": true}),
    );
    dir.receipt("unstable.json", json!({"shrink_stable": false}));
    dir.receipt("pass.json", json!({"failing_seed": null}));
    dir.receipt("elsewhere.json", json!({"property_id": "other"}));
    dir.receipt(
        "retired.json",
        json!({"fixture_hash": format!("sha256:{}", "0".repeat(64))}),
    );
    let both_local = [
        dir.row("w-local-1", "fail", "AssertionError", "local"),
        dir.row("w-local-2", "pass", "ok", "local"),
    ];
    let cases: [RefusalCase; 8] = [
        (
            "remote writer",
            &["r.json"],
            &["--expires-at", FUTURE, "--runner", "remote"],
            false,
            ADMIT,
            "a remote runner cannot write a citation",
        ),
        (
            "no expiry",
            &["r.json"],
            &[],
            false,
            ADMIT,
            "a citation needs an expiry from policy",
        ),
        (
            "empty expiry",
            &["r.json"],
            &["--expires-at", ""],
            false,
            ADMIT,
            "a citation needs an expiry from policy",
        ),
        (
            "decision refused: no remote witness",
            &["r.json"],
            &["--expires-at", FUTURE],
            true,
            "need both a local witness and a remote witness",
            "no admit: need both a local witness and a remote witness",
        ),
        (
            "an open receipt of the same patch",
            &["r.json", "open.json"],
            &["--expires-at", FUTURE],
            false,
            ADMIT,
            "patch `agent-1842` has 1 open receipt(s); freeze creation is disabled",
        ),
        (
            "no eligible receipt for the property",
            &["unstable.json", "pass.json", "elsewhere.json"],
            &["--expires-at", FUTURE],
            false,
            ADMIT,
            "patch `agent-1842` has no freeze_eligible receipt for property `order_total_nonneg`",
        ),
        (
            "the only eligible receipt was made against another fixture",
            &["retired.json"],
            &["--expires-at", FUTURE],
            false,
            ADMIT,
            "patch `agent-1842` has no freeze_eligible receipt for property `order_total_nonneg`",
        ),
        (
            "remote writer wins over a missing expiry",
            &["r.json"],
            &["--runner", "remote"],
            false,
            ADMIT,
            "a remote runner cannot write a citation",
        ),
    ];
    for (case, receipts, extra, local_only, reason, refusal) in cases {
        if local_only {
            dir.write_rows("w.jsonl", &both_local);
        } else {
            dir.admitted_pair();
        }
        let run = dir.cite(receipts, extra);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        assert_eq!(
            run.stdout.lines().next(),
            Some(reason),
            "{case}: {}",
            run.stdout
        );
        assert!(
            run.stdout
                .ends_with(&format!("citation refused: {refusal}\n")),
            "{case}: {}",
            run.stdout
        );
        assert!(!dir.exists("cite.json"), "{case}");
        let mut json_extra = extra.to_vec();
        json_extra.extend(["--format", "json"]);
        let run = dir.cite(receipts, &json_extra);
        assert_eq!(run.code, 1, "{case}");
        let admitted = reason == ADMIT;
        assert_eq!(
            json_lines(&run.stdout).pop().unwrap(),
            json!({
                "written": false,
                "reason": reason,
                "refusal": refusal,
                "citation": null,
                "fail_id": if admitted { json!("w-local-1") } else { Value::Null },
                "pass_id": if admitted { json!("w-remote-9") } else { Value::Null },
            }),
            "{case}"
        );
        assert!(!dir.exists("cite.json"), "{case}");
    }
    // The retired receipt is named on stderr.
    dir.admitted_pair();
    let run = dir.cite(&["retired.json"], &["--expires-at", FUTURE]);
    assert!(
        run.stderr.contains("`retired.json` is retired"),
        "{}",
        run.stderr
    );
}

#[test]
fn cite_bad_expiry_exits_2() {
    let dir = Dir::new();
    dir.admitted_pair();
    dir.receipt("r.json", json!({}));
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
        let run = dir.cite(&["r.json"], &["--expires-at", expiry]);
        assert_eq!(run.code, 2, "{expiry}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{expiry}: {}", run.stdout);
        assert!(run.stderr.contains("--expires-at"), "{}", run.stderr);
        assert!(!run.stderr.contains("panicked"));
        assert!(!dir.exists("cite.json"));
    }
    let run = dir.cite(&["r.json"], &["--expires-at", "2001-01-01T00:00:00Z"]);
    assert!(run.stderr.contains("not in the future"), "{}", run.stderr);
    let run = dir.cite(&["r.json"], &["--expires-at", "tomorrow"]);
    assert!(
        run.stderr.contains("not an RFC 3339 time"),
        "{}",
        run.stderr
    );
}

#[test]
fn cite_never_overwrites_an_existing_citation() {
    let dir = Dir::new();
    dir.admitted_pair();
    dir.receipt("r.json", json!({}));
    dir.write("cite.json", "the old citation\n");
    for extra in [
        &["--expires-at", FUTURE][..],
        &["--expires-at", FUTURE, "--format", "json"][..],
        // Even a refusal would not touch it: the existing file is checked first.
        &["--runner", "remote"][..],
    ] {
        let run = dir.cite(&["r.json"], extra);
        assert_eq!(run.code, 2, "{extra:?}: {}", run.stderr);
        assert!(run.stdout.is_empty(), "{}", run.stdout);
        assert!(
            run.stderr.contains("`--out cite.json` already exists"),
            "{}",
            run.stderr
        );
        assert_eq!(
            std::fs::read_to_string(dir.path().join("cite.json")).unwrap(),
            "the old citation\n"
        );
    }
    // A directory in the way is refused the same way.
    std::fs::remove_file(dir.path().join("cite.json")).unwrap();
    std::fs::create_dir(dir.path().join("cite.json")).unwrap();
    assert_eq!(dir.cite(&["r.json"], &["--expires-at", FUTURE]).code, 2);
}

#[test]
fn cite_needs_the_receipts_of_one_patch() {
    let dir = Dir::new();
    dir.admitted_pair();
    dir.receipt("r.json", json!({}));
    dir.receipt("p2.json", json!({"patch_id": "agent-7"}));
    dir.receipt("anon.json", json!({"patch_id": null}));
    dir.write("broken.json", "{\n  \"patch_id\": \n");
    let with = |receipts: &[&str]| dir.cite(receipts, &["--expires-at", FUTURE]);
    let run = with(&["r.json", "p2.json"]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr
            .contains("`agent-1842` (first in `r.json`), `agent-7` (first in `p2.json`)"),
        "{}",
        run.stderr
    );
    let run = with(&["r.json", "anon.json"]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr.contains("receipt `anon.json`: field `patch_id`"),
        "{}",
        run.stderr
    );
    let run = with(&["r.json", "broken.json", "missing.json"]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr.contains("broken.json") && run.stderr.contains("line 3"),
        "{}",
        run.stderr
    );
    assert!(run.stderr.contains("missing.json"), "{}", run.stderr);
    // Unreadable witnesses, spec or fixture: exit 2, as for `gate decide`.
    let run = dir.cite(
        &["r.json"],
        &["--expires-at", FUTURE, "--fixture", "fixtures/none.json"],
    );
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(run.stderr.contains("fixtures/none.json"), "{}", run.stderr);
    let run = dir.cite(&["r.json"], &["--expires-at", FUTURE, "--root", "nowhere"]);
    assert_eq!((run.code, run.stdout.as_str()), (2, ""));
    assert!(
        run.stderr.contains("nowhere/props/order_total_nonneg.md"),
        "{}",
        run.stderr
    );
    assert!(!dir.exists("cite.json"));
}

// ---------------------------------------------------------------------------------------
// counts

#[test]
fn counts_per_patch_open_closed_failures_and_budget_passes() {
    let dir = Dir::new();
    // agent-1842: one open (seed_gap), two closed failures, one budget pass.
    dir.receipt("a-eligible.json", json!({}));
    dir.receipt("a-unstable.json", json!({"shrink_stable": false}));
    dir.receipt("a-pass.json", json!({"failing_seed": null}));
    dir.receipt("a-gap.json", json!({"attempted_seeds": [1101, 1102]}));
    // agent-7: closed only.
    dir.receipt("b-eligible.json", json!({"patch_id": "agent-7"}));
    dir.receipt(
        "b-pass.json",
        json!({"patch_id": "agent-7", "failing_seed": null}),
    );
    // agent-9: a killed run and a receipt with a malformed decision field.
    dir.receipt(
        "c-killed.json",
        json!({"patch_id": "agent-9", "attempted_seeds": [1101], "stopped_early": true}),
    );
    dir.receipt(
        "c-bad.json",
        json!({"patch_id": "agent-9", "planned_seeds": ["1101"]}),
    );
    let all = [
        "c-killed.json",
        "a-eligible.json",
        "b-eligible.json",
        "a-unstable.json",
        "a-pass.json",
        "c-bad.json",
        "a-gap.json",
        "b-pass.json",
    ];
    let mut args = vec!["gate", "counts"];
    args.extend(all);
    let run = dir.run(&args);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "agent-1842: open 1, closed failures 2, budget passes 1; freeze path disabled\n\
         agent-7: open 0, closed failures 1, budget passes 1; freeze path enabled\n\
         agent-9: open 2, closed failures 0, budget passes 0; freeze path disabled\n"
    );
    // Each open receipt is named with why.
    for needle in [
        "`a-gap.json` is open: seed_gap",
        "`c-killed.json` is open: early_stop_incomplete",
        "`c-bad.json` is open: incomplete_fields",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
    let mut json_args = vec!["gate", "counts", "--format", "json"];
    json_args.extend(all);
    let run = dir.run(&json_args);
    assert_eq!(run.code, 1);
    assert_eq!(
        json_lines(&run.stdout),
        [
            json!({"patch_id": "agent-1842", "open_receipts": 1, "closed_failures": 2, "budget_passes": 1, "freeze_enabled": false}),
            json!({"patch_id": "agent-7", "open_receipts": 0, "closed_failures": 1, "budget_passes": 1, "freeze_enabled": true}),
            json!({"patch_id": "agent-9", "open_receipts": 2, "closed_failures": 0, "budget_passes": 0, "freeze_enabled": false}),
        ]
    );
    // Every patch closed: exit 0.
    let run = dir.run(&[
        "gate",
        "counts",
        "b-eligible.json",
        "b-pass.json",
        "a-pass.json",
    ]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(run.stdout.lines().count(), 2);
}

#[test]
fn counts_unreadable_input_exits_2_and_still_counts_the_rest() {
    let dir = Dir::new();
    dir.receipt("good.json", json!({}));
    dir.receipt("anon.json", json!({"patch_id": ""}));
    dir.write("broken.json", "{\"planned_seeds\": [1");
    dir.write("binary.json", b"\xff\xfe");
    let run = dir.run(&[
        "gate",
        "counts",
        "--format",
        "json",
        "broken.json",
        "missing.json",
        "anon.json",
        "binary.json",
        "good.json",
    ]);
    assert_eq!(run.code, 2);
    assert_eq!(
        json_lines(&run.stdout),
        [
            json!({"patch_id": "agent-1842", "open_receipts": 0, "closed_failures": 1, "budget_passes": 0, "freeze_enabled": true})
        ]
    );
    for needle in [
        "receipt `broken.json`: not JSON: line 1",
        "cannot read receipt `missing.json`",
        "receipt `anon.json`: field `patch_id`",
        "receipt `binary.json`: not JSON: line 1",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
    assert!(!run.stderr.contains("panicked"));
}

// ---------------------------------------------------------------------------------------
// help and bad arguments

#[test]
fn help_says_what_each_command_does_and_its_exit_codes() {
    let dir = Dir::new();
    for (args, needle) in [
        (&["gate", "--help"][..], "decide"),
        (&["gate", "close", "--help"][..], "freeze_eligible"),
        (
            &["gate", "decide", "--help"][..],
            "stable signature across opposite verdicts",
        ),
        (
            &["gate", "cite", "--help"][..],
            "never refreshed or extended",
        ),
        (&["gate", "cite", "--help"][..], "--expires-at <RFC3339>"),
        (&["gate", "counts", "--help"][..], "freeze_enabled"),
        (&["gate", "--help"][..], "counts"),
        (&["gate", "pin", "--help"][..], "fixture-v1"),
        (&["gate", "digest", "--help"][..], "sha256"),
    ] {
        let run = dir.run(args);
        assert_eq!(run.code, 0, "{args:?}");
        assert!(run.stdout.contains(needle), "{args:?}: {}", run.stdout);
    }
    for cmd in ["close", "cite", "counts"] {
        let run = dir.run(&["gate", cmd, "--help"]);
        assert!(
            run.stdout.contains("Exit status: 0"),
            "{cmd}: {}",
            run.stdout
        );
    }
}

#[test]
fn bad_arguments_exit_2() {
    let dir = Dir::new();
    for args in [
        &["gate", "close"][..],
        &["gate", "close", "--format", "xml", "r.json"][..],
        &["gate", "decide", "--witnesses", "w.jsonl"][..],
        &["gate", "decide", "--property", "order_total_nonneg"][..],
        &["gate", "pin"][..],
        &["gate", "counts"][..],
        &[
            "gate",
            "cite",
            "--property",
            "p",
            "--witnesses",
            "w.jsonl",
            "--receipts",
            "r.json",
        ][..],
        &[
            "gate",
            "cite",
            "--property",
            "p",
            "--witnesses",
            "w.jsonl",
            "--out",
            "c.json",
        ][..],
        &[
            "gate",
            "cite",
            "--property",
            "p",
            "--receipts",
            "r.json",
            "--out",
            "c.json",
        ][..],
        &[
            "gate",
            "cite",
            "--property",
            "p",
            "--witnesses",
            "w.jsonl",
            "--receipts",
            "r.json",
            "--out",
            "c.json",
            "--runner",
            "cloud",
        ][..],
    ] {
        let run = dir.run(args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(!run.stderr.contains("panicked"));
    }
}
