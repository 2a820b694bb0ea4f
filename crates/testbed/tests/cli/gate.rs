//! `cargo xtask gate ...` end to end: the real `xtask` binary, run in a temporary workspace,
//! checked for exit codes, output lines and JSON line shapes. `Dir` and the helpers here are
//! shared with `gate_cite.rs` and `gate_freezes.rs`.

use serde_json::{Value, json};
use std::path::Path;

/// A temporary workspace root with a spec, its fixture and helpers to run `xtask` in it.
pub(crate) struct Dir {
    tmp: tempfile::TempDir,
}

pub(crate) struct Run {
    pub(crate) code: i32,
    pub(crate) stdout: String,
    pub(crate) stderr: String,
}

pub(crate) const SPEC: &str = "---\nproperty_id: order_total_nonneg\nbound: total>=0\nfixture: fixtures/order.json\noracle_source: human_reviewed\n---\nAn order's total is never negative.\n";
pub(crate) const FIXTURE: &str = "{\"lines\": [{\"sku\": \"a\", \"qty\": 2, \"price\": 150}]}\n";

/// Decision 2's only admit (SPEC, word for word).
pub(crate) const ADMIT: &str = "stable signature across opposite verdicts";
/// The same-seed review's refusal (SPEC: Same-seed review, word for word).
pub(crate) const NO_SAME_SEED: &str =
    "no pass on a failing seed: opposite verdicts came from different inputs";
/// The review line printed when no fail and pass in scope share a seed.
pub(crate) const REVIEW_REFUSED: &str =
    "same-seed review: no pass on a failing seed: opposite verdicts came from different inputs";

/// The review line printed for a same-seed pair.
pub(crate) fn review_passed(fail_id: &str, pass_id: &str, seed: u64) -> String {
    format!("same-seed review: passed: fail `{fail_id}` and pass `{pass_id}` on seed {seed}")
}

/// The `same_seed_review` object of a JSON last line for a same-seed pair.
fn review_json_passed(fail_id: &str, pass_id: &str, seed: u64) -> Value {
    json!({"passed": true, "reason": null, "fail_id": fail_id, "pass_id": pass_id, "seed": seed})
}

/// The `same_seed_review` object of a JSON last line when no fail and pass share a seed.
pub(crate) fn review_json_refused() -> Value {
    json!({"passed": false, "reason": NO_SAME_SEED, "fail_id": null, "pass_id": null, "seed": null})
}

/// The pair a same-seed review names, `(fail_id, pass_id, seed)`; `None` when no fail and
/// pass in scope share a seed.
pub(crate) type SameSeed<'a> = Option<(&'a str, &'a str, u64)>;

/// The review line printed for `pair`.
pub(crate) fn review_line(pair: SameSeed<'_>) -> String {
    match pair {
        Some((fail_id, pass_id, seed)) => review_passed(fail_id, pass_id, seed),
        None => REVIEW_REFUSED.to_string(),
    }
}

/// The `same_seed_review` object of a JSON last line for `pair`.
pub(crate) fn review_json(pair: SameSeed<'_>) -> Value {
    match pair {
        Some((fail_id, pass_id, seed)) => review_json_passed(fail_id, pass_id, seed),
        None => review_json_refused(),
    }
}

/// `v` with the keys of `changes` set (a null value is kept as null).
pub(crate) fn edit(mut v: Value, changes: Value) -> Value {
    for (k, change) in changes.as_object().unwrap() {
        v[k] = change.clone();
    }
    v
}

impl Dir {
    pub(crate) fn new() -> Dir {
        let dir = Dir {
            tmp: tempfile::tempdir().unwrap(),
        };
        dir.write("props/order_total_nonneg.md", SPEC);
        dir.write("fixtures/order.json", FIXTURE);
        dir
    }

    /// [`Dir::new`] as a git repository whose one commit holds the spec and the fixture.
    pub(crate) fn repo() -> Dir {
        let dir = Dir::new();
        dir.git(&["init", "-q"]);
        dir.git(&["add", "."]);
        dir.git(&["commit", "-q", "-m", "base"]);
        dir
    }

    pub(crate) fn path(&self) -> &Path {
        self.tmp.path()
    }

    pub(crate) fn write(&self, rel: &str, contents: impl AsRef<[u8]>) {
        let path = self.path().join(rel);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(path, contents).unwrap();
    }

    pub(crate) fn read(&self, rel: &str) -> String {
        std::fs::read_to_string(self.path().join(rel)).unwrap()
    }

    pub(crate) fn exists(&self, rel: &str) -> bool {
        self.path().join(rel).exists()
    }

    /// The environment every command of this workspace runs in: git never looks above the
    /// temporary directory (so a workspace that is not a repository stays one even when the
    /// temporary directory sits inside some checkout), and nothing points git elsewhere.
    fn hermetic(&self, cmd: &mut std::process::Command) {
        cmd.current_dir(self.path())
            .env("GIT_CEILING_DIRECTORIES", self.path().parent().unwrap())
            .env_remove("GIT_DIR")
            .env_remove("GIT_WORK_TREE")
            .env_remove("GIT_INDEX_FILE")
            .env_remove("SEEDLEDGER_PATCH_ID")
            .env_remove("SEEDLEDGER_BASE")
            .env_remove("SEEDLEDGER_SYNC")
            .env_remove("SEEDLEDGER_TEST_SYNC_LOG");
    }

    pub(crate) fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// [`Dir::run`] with extra environment variables.
    pub(crate) fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = std::process::Command::new(env!("CARGO_BIN_EXE_testbed"));
        cmd.args(args);
        self.hermetic(&mut cmd);
        cmd.envs(env.iter().copied());
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    /// `git ARGS` in the workspace; its stdout, raw.
    pub(crate) fn git_bytes(&self, args: &[&str]) -> Vec<u8> {
        let mut cmd = std::process::Command::new("git");
        cmd.args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@example.invalid",
            "-c",
            "commit.gpgsign=false",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args);
        self.hermetic(&mut cmd);
        let out = cmd.output().unwrap();
        assert!(out.status.success(), "git {args:?}: {out:?}");
        out.stdout
    }

    /// `git ARGS` in the workspace; its stdout, trimmed.
    pub(crate) fn git(&self, args: &[&str]) -> String {
        String::from_utf8(self.git_bytes(args))
            .unwrap()
            .trim()
            .to_string()
    }

    /// Writes and commits `rel`; returns the new HEAD commit id.
    pub(crate) fn commit(&self, rel: &str, contents: &str) -> String {
        self.write(rel, contents);
        self.git(&["add", rel]);
        self.git(&["commit", "-q", "-m", rel]);
        self.git(&["rev-parse", "HEAD"])
    }

    /// The code identity of the work tree without a base, computed here with git: the
    /// tracked files are those of HEAD (the rows, receipts and citations the tests write are
    /// untracked, and git's diff leaves untracked files out), so it is `commit:<HEAD>`.
    pub(crate) fn head_code(&self) -> String {
        let changed = self.git(&["status", "--porcelain", "--untracked-files=no"]);
        assert_eq!(changed, "", "a tracked file differs from HEAD");
        format!("commit:{}", self.git(&["rev-parse", "HEAD"]))
    }

    /// The code identity of the work tree against `base`, computed here with git:
    /// `diff:` + sha256 of `seedledger-code-v1\n<base commit>\n` and the full diff (full object
    /// ids, binary-safe) with the freeze store left out.
    pub(crate) fn diff_code(&self, base: &str) -> String {
        // The hash function itself, checked on its standard test vector first.
        assert_eq!(
            seedledger_format::sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let diff = self.git_bytes(&[
            "diff",
            "--no-ext-diff",
            "--no-color",
            "--full-index",
            "--binary",
            base,
            "--",
            ".",
            ":(exclude)props/freezes",
        ]);
        assert!(
            !diff.is_empty(),
            "the work tree does not differ from {base}"
        );
        // The base commit is named in what is hashed: the same diff on another base is other
        // code.
        let mut named =
            format!("seedledger-code-v1\n{}\n", self.git(&["rev-parse", base])).into_bytes();
        named.extend_from_slice(&diff);
        format!("diff:{}", seedledger_format::sha256_hex(&named))
    }

    pub(crate) fn digest(&self) -> String {
        seedledger_format::property_digest(SPEC.as_bytes())
    }

    pub(crate) fn pin(&self) -> String {
        seedledger_format::fixture_pin(FIXTURE.as_bytes())
    }

    /// A witness row bound to this workspace's spec and fixture, on seed 17.
    pub(crate) fn row(&self, id: &str, verdict: &str, signature: &str, runner: &str) -> Value {
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

    /// [`Dir::row`] on another seed.
    pub(crate) fn row_on(
        &self,
        seed: u64,
        id: &str,
        verdict: &str,
        signature: &str,
        runner: &str,
    ) -> Value {
        edit(
            self.row(id, verdict, signature, runner),
            json!({"seed": seed}),
        )
    }

    pub(crate) fn write_rows(&self, rel: &str, rows: &[Value]) {
        let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
        self.write(rel, text);
    }

    /// The seed document's admitted pair, in `w.jsonl`.
    pub(crate) fn admitted_pair(&self) {
        self.write_rows(
            "w.jsonl",
            &[
                self.row("w-local-1", "fail", "AssertionError", "local"),
                self.row("w-remote-9", "pass", "ok", "remote"),
            ],
        );
    }

    /// A receipt for this workspace's fixture, with `changes` applied.
    pub(crate) fn receipt(&self, rel: &str, changes: Value) {
        let r = json!({
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
        self.write(
            rel,
            serde_json::to_string_pretty(&edit(r, changes)).unwrap(),
        );
    }

    /// A receipt as a run leaves it, for the commands that cross-check a receipt with its
    /// run's rows: [`Dir::receipt`] with `changes`, a `run_id`, the spec's digest and bound,
    /// and `verdicts`, `failing_seeds` and `failure_modes` agreeing with its seeds, and a
    /// shrink record bearing out `shrink_stable` (`shrink_status: done`, two passes at one
    /// fixed point) when it fails; a run where nothing failed records `shrink_stable: false`
    /// and `shrink_status: not_needed` (unless `changes` say otherwise). And that run's rows,
    /// one per attempted seed (failing on the failing seed with signature `AssertionError`),
    /// appended to `<property_id>.witness.jsonl` beside it: witness ids
    /// `<run_id>-<seed>`, run_id `run-<rel without .json, / as ->`. The rows carry the
    /// receipt's property, patch, code and pin, whatever `changes` made them.
    pub(crate) fn evidence(&self, rel: &str, changes: Value) {
        let run_id = format!("run-{}", rel.trim_end_matches(".json").replace('/', "-"));
        let extensions = json!({
            "run_id": run_id,
            "property_digest": self.digest(),
            "bound": "total>=0",
        });
        self.receipt(rel, edit(extensions, changes.clone()));
        let mut r: Value = serde_json::from_str(&self.read(rel)).unwrap();
        let attempted: Vec<u64> = r["attempted_seeds"]
            .as_array()
            .unwrap()
            .iter()
            .map(|s| s.as_u64().unwrap())
            .collect();
        let failing = r["failing_seed"].as_u64();
        let mut derived = json!({
            "verdicts": attempted
                .iter()
                .map(|s| if Some(*s) == failing { 'F' } else { '.' })
                .collect::<String>(),
            "failing_seeds": failing.into_iter().collect::<Vec<u64>>(),
            "failure_modes": failing
                .map(|seed| vec![json!({"signature": "AssertionError", "count": 1, "first_seed": seed})])
                .unwrap_or_default(),
        });
        match failing {
            Some(seed) if r["shrink_stable"] == json!(true) => {
                let pass = json!({"evaluations": 3, "cache_hits": 0, "stop_reason": "fixed_point",
                    "millis": 1, "minimal_choices": [0]});
                derived["shrink_status"] = json!("done");
                derived["shrink"] = json!({
                    "seed": seed, "signature": "AssertionError", "original_input": "[150]",
                    "original_choices_len": 1, "minimal_input": "[0]", "minimal_choices": [0],
                    "minimal_message": "total < 0", "stable": true, "passes": [pass, pass],
                    "max_evaluations": 5000, "max_millis": 10000,
                });
            }
            Some(_) => {}
            None => {
                derived["shrink_stable"] = json!(false);
                derived["shrink_status"] = json!("not_needed");
            }
        }
        for (k, v) in derived.as_object().unwrap() {
            if !changes.as_object().unwrap().contains_key(k) {
                r[k] = v.clone();
            }
        }
        self.write(rel, serde_json::to_string_pretty(&r).unwrap());
        let property = r["property_id"].as_str().unwrap();
        let pin = r["fixture_hash"]
            .as_str()
            .unwrap()
            .trim_start_matches("sha256:");
        let mut rows = String::new();
        for seed in attempted {
            let fails = Some(seed) == failing;
            let mut row = json!({
                "witness_id": format!("{run_id}-{seed}"),
                "property_id": property,
                "property_digest": r["property_digest"],
                "fixture_pin": pin,
                "bound": r["bound"],
                "seed": seed,
                "verdict": if fails { "fail" } else { "pass" },
                "signature": if fails { "AssertionError" } else { "ok" },
                "runner": "local",
                "freeze_writer": false,
                "run_id": run_id,
                "patch_id": r["patch_id"],
            });
            if let Some(code) = r.get("code") {
                row["code"] = code.clone();
            }
            rows.push_str(&format!("{row}\n"));
        }
        let witnesses = Path::new(rel).with_file_name(format!("{property}.witness.jsonl"));
        let path = self.path().join(witnesses);
        let before = std::fs::read_to_string(&path).unwrap_or_default();
        std::fs::write(path, before + &rows).unwrap();
    }

    /// The row `witness_id` of the witness file `rel`, as a run wrote it there (see
    /// [`Dir::evidence`]); panics when the file holds no such row.
    pub(crate) fn run_row(&self, rel: &str, witness_id: &str) -> Value {
        self.read(rel)
            .lines()
            .map(|l| serde_json::from_str::<Value>(l).unwrap())
            .find(|row| row["witness_id"] == witness_id)
            .unwrap_or_else(|| panic!("`{rel}` holds no row `{witness_id}`"))
    }

    pub(crate) fn files(&self) -> Vec<String> {
        let mut out = Vec::new();
        let mut stack = vec![self.path().to_path_buf()];
        while let Some(dir) = stack.pop() {
            for entry in std::fs::read_dir(dir).unwrap() {
                let path = entry.unwrap().path();
                if path.file_name().is_some_and(|n| n == ".git") {
                    continue;
                }
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

pub(crate) fn json_lines(stdout: &str) -> Vec<Value> {
    stdout
        .lines()
        .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
        .collect()
}

pub(crate) fn keys(v: &Value) -> Vec<&str> {
    v.as_object().unwrap().keys().map(String::as_str).collect()
}

// ---------------------------------------------------------------------------------------
// pin / digest

#[test]
fn pin_and_digest_match_the_format_crate() {
    let dir = Dir::new();
    let run = dir.run(&["gate", "pin", "fixtures/order.json"]);
    assert_eq!(
        (run.code, run.stdout.trim()),
        (0, format!("sha256:{}", dir.pin()).as_str())
    );
    let run = dir.run(&["gate", "pin", "--bare", "fixtures/order.json"]);
    assert_eq!((run.code, run.stdout.trim()), (0, dir.pin().as_str()));
    let run = dir.run(&["gate", "digest", "props/order_total_nonneg.md"]);
    assert_eq!((run.code, run.stdout.trim()), (0, dir.digest().as_str()));
    // The empty file's pin, computed independently with sha256sum.
    dir.write("empty", "");
    let run = dir.run(&["gate", "pin", "--bare", "empty"]);
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

/// A JSON object with a repeated key is invalid wherever the gate reads one (SPEC: Duplicate
/// keys): a reader that kept the last occurrence would let `"stopped_early": true, ...,
/// "stopped_early": false` close.
#[test]
fn close_a_receipt_with_a_repeated_key_is_incomplete_fields() {
    let dir = Dir::new();
    dir.receipt("eligible.json", json!({}));
    let eligible = dir.read("eligible.json");
    let repeat = |after: &str, repeated: &str| {
        assert!(eligible.contains(after), "{after}");
        eligible.replacen(after, &format!("{after}\n  {repeated},"), 1)
    };
    let table = [
        (
            // Open first, closed last: the open run must not be hidden.
            "stopped-early.json",
            eligible.replacen(
                "\"stopped_early\": false",
                "\"stopped_early\": true,\n  \"stopped_early\": false",
                1,
            ),
            "stopped_early",
        ),
        (
            "failing-seed.json",
            repeat("\"failing_seed\": 1103,", "\"failing_seed\": 1103"),
            "failing_seed",
        ),
        (
            "extension.json",
            repeat(
                "\"oracle_source\": \"human_reviewed\",",
                "\"note\": \"a\", \"note\": \"b\"",
            ),
            "note",
        ),
        (
            "nested.json",
            repeat(
                "\"oracle_source\": \"human_reviewed\",",
                "\"shrink\": {\"seed\": 1103, \"seed\": 1104}",
            ),
            "seed",
        ),
    ];
    assert!(
        table[0]
            .1
            .contains("\"stopped_early\": true,\n  \"stopped_early\": false")
    );
    for (file, text, _) in &table {
        dir.write(file, text);
    }
    for (file, _, key) in &table {
        let run = dir.run(&["gate", "close", file]);
        assert_eq!(run.code, 1, "{file}: {}", run.stderr);
        assert!(
            run.stdout
                .starts_with(&format!("{file}: incomplete_fields (")),
            "{file}: {}",
            run.stdout
        );
        assert!(
            run.stdout.contains(&format!("duplicate key `{key}`")),
            "{file}: {}",
            run.stdout
        );
    }
    // The same receipt without the repetition is eligible: the repetition alone decided.
    assert_eq!(
        dir.run(&["gate", "close", "eligible.json"]).stdout,
        "eligible.json: freeze_eligible\n"
    );
    // It counts as an open receipt of its patch.
    let run = dir.run(&["gate", "counts", "stopped-early.json", "eligible.json"]);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "agent-1842: open 1, closed failures 1, budget passes 0; freeze path disabled\n"
    );
}

// ---------------------------------------------------------------------------------------
// decide

const DECIDE: [&str; 6] = [
    "gate",
    "decide",
    "--property",
    "order_total_nonneg",
    "--witnesses",
    "w.jsonl",
];

#[test]
fn decide_admits_the_seed_documents_pair() {
    let dir = Dir::new();
    dir.admitted_pair();
    let before = dir.files();
    let run = dir.run(&DECIDE);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "stable signature across opposite verdicts\nfail_id: w-local-1\npass_id: w-remote-9\n\
         same-seed review: passed: fail `w-local-1` and pass `w-remote-9` on seed 17\n"
    );
    let mut json_args = DECIDE.to_vec();
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
            "pass_id": "w-remote-9",
            "roles": "unauthenticated",
            "same_seed_review": {
                "passed": true,
                "reason": null,
                "fail_id": "w-local-1",
                "pass_id": "w-remote-9",
                "seed": 17
            }
        })
    );
    // It writes nothing.
    assert_eq!(dir.files(), before);
}

/// (case, rows, the decision's fail_id and pass_id, the review's pair)
type ReviewCase<'a> = (&'a str, Vec<Value>, (&'a str, &'a str), SameSeed<'a>);

/// The same-seed review line follows the decision and never changes it: an admit on rows of
/// different seeds still exits 0, and the review names the pair that shares a seed, which
/// need not be the decision's first fail and first pass.

#[test]
fn decide_prints_the_same_seed_review_after_the_decision_without_changing_it() {
    let dir = Dir::new();
    let fail =
        |seed, id: &str, runner: &str| dir.row_on(seed, id, "fail", "AssertionError", runner);
    let pass = |seed, id: &str, runner: &str| dir.row_on(seed, id, "pass", "ok", runner);
    let cases: [ReviewCase; 5] = [
        (
            "one seed, opposite verdicts",
            vec![
                fail(1102, "l-1102", "local"),
                pass(1102, "r-1102", "remote"),
            ],
            ("l-1102", "r-1102"),
            Some(("l-1102", "r-1102", 1102)),
        ),
        (
            "a fail and a pass on different seeds: different inputs",
            vec![
                fail(1102, "l-1102", "local"),
                pass(1101, "r-1101", "remote"),
            ],
            ("l-1102", "r-1101"),
            None,
        ),
        (
            "the deterministic bug: fails on 1102 everywhere, passes on 1101",
            vec![
                pass(1101, "l-1101", "local"),
                fail(1102, "l-1102", "local"),
                fail(1102, "r-1102", "remote"),
            ],
            ("l-1102", "l-1101"),
            None,
        ),
        (
            "the same-seed pass is not the first pass",
            vec![
                pass(1101, "l-1101", "local"),
                fail(1102, "l-1102", "local"),
                pass(1102, "r-1102", "remote"),
            ],
            ("l-1102", "l-1101"),
            Some(("l-1102", "r-1102", 1102)),
        ),
        (
            "the same-seed fail is not the first fail",
            vec![
                fail(1103, "l-1103", "local"),
                fail(1102, "l-1102", "local"),
                pass(1101, "r-1101", "remote"),
                pass(1102, "r-1102", "remote"),
            ],
            ("l-1103", "r-1101"),
            Some(("l-1102", "r-1102", 1102)),
        ),
    ];
    for (case, rows, (fail_id, pass_id), pair) in cases {
        dir.write_rows("w.jsonl", &rows);
        let run = dir.run(&DECIDE);
        assert_eq!(
            run.code, 0,
            "{case}: the decision alone sets the exit status"
        );
        let review = review_line(pair);
        assert_eq!(
            run.stdout,
            format!("{ADMIT}\nfail_id: {fail_id}\npass_id: {pass_id}\n{review}\n"),
            "{case}"
        );
        let mut json_args = DECIDE.to_vec();
        json_args.extend(["--format", "json"]);
        let run = dir.run(&json_args);
        assert_eq!(run.code, 0, "{case}");
        assert_eq!(
            json_lines(&run.stdout).pop().unwrap(),
            json!({
                "admit": true,
                "reason": ADMIT,
                "fail_id": fail_id,
                "pass_id": pass_id,
                "same_seed_review": review_json(pair),
                "roles": "unauthenticated",
            }),
            "{case}"
        );
    }
}

#[test]
fn decide_refusals_exit_1_with_the_reason() {
    let dir = Dir::new();
    // The minting row runs another seed than the fail, so the review has no same-seed pair
    // whether or not it counts a row of a discarded batch.
    let mut minting = dir.row_on(18, "w-remote-bad", "pass", "ok", "remote");
    minting["freeze_writer"] = json!(true);
    let same_seed = Some(("w-local-1", "w-remote-9", 17));
    // (rows, reason, the review's same-seed pair)
    let cases: [(Vec<Value>, &str, SameSeed); 7] = [
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                minting,
            ],
            "remote witness w-remote-bad attempted to mint",
            None,
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                dir.row("w-remote-9", "pass", "ok", "remote"),
                dir.row("w-local-2", "fail", "KeyError", "local"),
            ],
            "fail signature is not stable",
            same_seed,
        ),
        (
            vec![dir.row("w-local-1", "fail", "AssertionError", "local")],
            "need two witnesses on the same pin, digest, and bound",
            None,
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                dir.row("w-remote-1", "fail", "AssertionError", "remote"),
            ],
            "opposite verdicts required",
            None,
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                dir.row("w-local-2", "pass", "ok", "local"),
            ],
            "need both a local witness and a remote witness",
            // Two local rows on one seed are no pair: it must span the two runners.
            None,
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "AssertionError", "local"),
                dir.row_on(18, "w-local-2", "pass", "ok", "local"),
            ],
            "need both a local witness and a remote witness",
            None,
        ),
        (
            vec![
                dir.row("w-local-1", "fail", "ok", "local"),
                dir.row("w-remote-9", "pass", "ok", "remote"),
            ],
            "fail witness cannot carry an ok signature",
            same_seed,
        ),
    ];
    for (rows, reason, pair) in cases {
        dir.write_rows("w.jsonl", &rows);
        let run = dir.run(&DECIDE);
        assert_eq!(run.code, 1, "{reason}: {}", run.stderr);
        let review = review_line(pair);
        assert_eq!(run.stdout, format!("{reason}\n{review}\n"));
        let mut json_args = DECIDE.to_vec();
        json_args.extend(["--format", "json"]);
        let run = dir.run(&json_args);
        assert_eq!(run.code, 1, "{reason}");
        assert_eq!(
            json_lines(&run.stdout).pop().unwrap(),
            json!({
                "admit": false,
                "reason": reason,
                "fail_id": null,
                "pass_id": null,
                "same_seed_review": review_json(pair),
                "roles": "unauthenticated",
            }),
            "{reason}"
        );
    }
}

/// A witness row with a repeated key is malformed (SPEC: Duplicate keys): a remote row that
/// says `freeze_writer: true` and then `false` must not pass for a non-minting row.
#[test]
fn decide_a_row_with_a_repeated_key_is_a_malformed_witness() {
    let dir = Dir::new();
    let pass = dir.row("w-remote-9", "pass", "ok", "remote").to_string();
    let fail = dir
        .row("w-local-1", "fail", "AssertionError", "local")
        .to_string();
    let repeat = |row: &str, after: &str, repeated: &str| {
        assert!(row.contains(after), "{after}");
        row.replacen(after, &format!("{after}{repeated},"), 1)
    };
    let cases = [
        (
            "freeze_writer true, then false",
            repeat(&pass, "{", "\"freeze_writer\":true"),
            "freeze_writer",
        ),
        (
            "runner remote, then local",
            repeat(&pass, "{", "\"runner\":\"local\""),
            "runner",
        ),
        (
            "an extension repeated inside an object",
            repeat(&pass, "{", "\"x\":{\"a\":1,\"a\":2}"),
            "a",
        ),
    ];
    // The row as written keeps its key order: the repeated key comes first, the row's own
    // value last (which a last-wins reader would keep).
    assert!(
        cases[0].1.starts_with("{\"freeze_writer\":true,"),
        "{}",
        cases[0].1
    );
    assert!(
        cases[0].1.contains("\"freeze_writer\":false"),
        "{}",
        cases[0].1
    );
    for (case, bad, key) in cases {
        dir.write("w.jsonl", format!("{fail}\n{bad}\n"));
        let run = dir.run(&DECIDE);
        assert_eq!(run.code, 1, "{case}: {}", run.stderr);
        assert_eq!(
            run.stdout.lines().next(),
            Some("malformed witness w-remote-9"),
            "{case}: {}",
            run.stdout
        );
        assert!(
            run.stderr.contains("`w.jsonl`: line 2")
                && run.stderr.contains(&format!("duplicate key `{key}`")),
            "{case}: {}",
            run.stderr
        );
    }
    // Without the repetition the same rows admit.
    dir.write("w.jsonl", format!("{fail}\n{pass}\n"));
    assert_eq!(dir.run(&DECIDE).code, 0);
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
    // The review reads the rows that are rows: the admitted pair, on seed 17.
    assert_eq!(
        run.stdout,
        "malformed witness w-x\n\
         same-seed review: passed: fail `w-local-1` and pass `w-remote-9` on seed 17\n"
    );
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
    assert_eq!(
        run.stdout,
        "malformed witness line 3\n\
         same-seed review: passed: fail `w-local-1` and pass `w-remote-9` on seed 17\n"
    );
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
    // Rows out of scope are out of the review's scope too: no pair.
    assert_eq!(
        run.stdout,
        format!("need two witnesses on the same pin, digest, and bound\n{REVIEW_REFUSED}\n")
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
    assert_eq!(
        run.stdout,
        format!("need two witnesses on the same pin, digest, and bound\n{REVIEW_REFUSED}\n")
    );
    assert!(run.stderr.contains("property_digest"), "{}", run.stderr);
    dir.write("props/order_total_nonneg.md", SPEC);
    let run = dir.run(&args);
    assert_eq!(run.code, 0);
    assert!(
        run.stdout.ends_with(
            "same-seed review: passed: fail `w-local-1` and pass `w-remote-9` on seed 17\n"
        ),
        "{}",
        run.stdout
    );
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
        (run.code, run.stdout),
        (
            1,
            format!("need two witnesses on the same pin, digest, and bound\n{REVIEW_REFUSED}\n")
        )
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
        format!("need two witnesses on the same pin, digest, and bound\n{REVIEW_REFUSED}\n")
    );
}

// `gate cite`: gate_cite.rs; `gate freezes`: gate_freezes.rs.

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
            json!({"patch_id": "agent-1842", "open_receipts": 1, "closed_failures": 2, "budget_passes": 1, "retired_receipts": 0, "freeze_enabled": false}),
            json!({"patch_id": "agent-7", "open_receipts": 0, "closed_failures": 1, "budget_passes": 1, "retired_receipts": 0, "freeze_enabled": true}),
            json!({"patch_id": "agent-9", "open_receipts": 2, "closed_failures": 0, "budget_passes": 0, "retired_receipts": 0, "freeze_enabled": false}),
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
            json!({"patch_id": "agent-1842", "open_receipts": 0, "closed_failures": 1, "budget_passes": 0, "retired_receipts": 0, "freeze_enabled": true})
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

/// A receipt whose fixture hash or code identity is not the work tree's any more is retired:
/// listed (`retired N`), in none of the three counts, and never disabling the freeze path
/// (SPEC: Per-patch counts and retirement). What cannot be computed retires nothing.
#[test]
fn counts_retired_receipts_are_listed_and_never_counted() {
    let dir = Dir::repo();
    let old = dir.head_code();
    dir.commit("patch.rs", "// the patch under test\n");
    let code = dir.head_code();
    assert_ne!(old, code);
    let other_pin = format!("sha256:{}", "0".repeat(64));
    let table = [
        ("current-eligible.json", json!({"code": code})),
        (
            "current-pass.json",
            json!({"code": code, "failing_seed": null}),
        ),
        // Recorded no code identity: judged by its fixture hash alone, and counted.
        ("no-code-pass.json", json!({"failing_seed": null})),
        ("old-eligible.json", json!({"code": old})),
        (
            "old-open.json",
            json!({"code": old, "stopped_early": true, "attempted_seeds": [1101]}),
        ),
        (
            "moved-eligible.json",
            json!({"code": code, "fixture_hash": other_pin}),
        ),
        (
            "b-open.json",
            json!({"code": code, "patch_id": "agent-7", "stopped_early": true}),
        ),
    ];
    let mut args = vec!["gate", "counts"];
    for (file, changes) in &table {
        dir.receipt(file, changes.clone());
        args.push(file);
    }
    let expected = "agent-1842: open 0, closed failures 1, budget passes 2, retired 3; freeze path enabled\n\
                    agent-7: open 1, closed failures 0, budget passes 0; freeze path disabled\n";
    let run = dir.run(&args);
    assert_eq!(run.code, 1, "agent-7 is open: {}", run.stderr);
    assert_eq!(run.stdout, expected);
    for needle in [
        "receipt `old-eligible.json` is retired (diff changed)",
        "receipt `old-open.json` is retired (diff changed)",
        "receipt `moved-eligible.json` is retired (fixture changed)",
        "receipt `b-open.json` is open: early_stop_incomplete",
    ] {
        assert!(run.stderr.contains(needle), "{needle}: {}", run.stderr);
    }
    let mut json_args = vec!["gate", "counts", "--format", "json"];
    json_args.extend(&args[2..]);
    let run = dir.run(&json_args);
    assert_eq!(run.code, 1);
    assert_eq!(
        json_lines(&run.stdout),
        [
            json!({"patch_id": "agent-1842", "open_receipts": 0, "closed_failures": 1, "budget_passes": 2, "retired_receipts": 3, "freeze_enabled": true}),
            json!({"patch_id": "agent-7", "open_receipts": 1, "closed_failures": 0, "budget_passes": 0, "retired_receipts": 0, "freeze_enabled": false}),
        ]
    );
    // A patch whose only open receipt is retired: the freeze path is enabled, exit 0.
    let run = dir.run(&["gate", "counts", "current-eligible.json", "old-open.json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "agent-1842: open 0, closed failures 1, budget passes 0, retired 1; freeze path enabled\n"
    );
    // `--root` says which work tree is current: this one, named absolutely, is the same...
    let root = dir.path().display().to_string();
    let mut rooted = vec!["gate", "counts", "--root", root.as_str()];
    rooted.extend(&args[2..]);
    let run = dir.run(&rooted);
    assert_eq!(
        (run.code, run.stdout.as_str()),
        (1, expected),
        "{}",
        run.stderr
    );
    // ...and a root with no spec, no fixture and no git retires nothing: the old open
    // receipt is open again and disables the freeze path (failing closed).
    let mut nowhere = vec!["gate", "counts", "--root", "nowhere"];
    nowhere.extend(&args[2..]);
    let run = dir.run(&nowhere);
    assert_eq!(run.code, 1, "{}", run.stderr);
    assert_eq!(
        run.stdout,
        "agent-1842: open 1, closed failures 3, budget passes 2; freeze path disabled\n\
         agent-7: open 1, closed failures 0, budget passes 0; freeze path disabled\n"
    );
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
        (&["gate", "cite", "--help"][..], "--store <DIR>"),
        (&["gate", "cite", "--help"][..], "--waive-same-seed-review"),
        (&["gate", "counts", "--help"][..], "freeze_enabled"),
        (&["gate", "counts", "--help"][..], "--root <DIR>"),
        (&["gate", "freezes", "--help"][..], "retired (diff changed)"),
        (&["gate", "freezes", "--help"][..], "--at <RFC3339>"),
        (&["gate", "--help"][..], "counts"),
        (&["gate", "--help"][..], "freezes"),
        (&["gate", "pin", "--help"][..], "fixture-v1"),
        (&["gate", "digest", "--help"][..], "sha256"),
    ] {
        let run = dir.run(args);
        assert_eq!(run.code, 0, "{args:?}");
        assert!(run.stdout.contains(needle), "{args:?}: {}", run.stdout);
    }
    for cmd in ["close", "decide", "cite", "counts", "freezes"] {
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
    let cite = [
        "gate",
        "cite",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
        "--receipts",
        "r.json",
    ];
    let with = |extra: &[&'static str]| {
        let mut args = cite.to_vec();
        args.extend(extra);
        args
    };
    let cases: [Vec<&str>; 14] = [
        vec!["gate", "close"],
        vec!["gate", "close", "--format", "xml", "r.json"],
        vec!["gate", "decide", "--witnesses", "w.jsonl"],
        vec!["gate", "decide", "--property", "order_total_nonneg"],
        vec!["gate", "pin"],
        vec!["gate", "counts"],
        vec!["gate", "counts", "r.json", "--root"],
        cite[..6].to_vec(),
        vec![
            "gate",
            "cite",
            "--property",
            "order_total_nonneg",
            "--receipts",
            "r.json",
        ],
        with(&["--runner", "cloud"]),
        // `--out FILE` is gone: the citation goes into the freeze store.
        with(&["--out", "c.json"]),
        with(&["--store"]),
        vec!["gate", "freezes", "--format", "xml"],
        vec!["gate", "freezes", "--at"],
    ];
    for args in cases {
        let run = dir.run(&args);
        assert_eq!(run.code, 2, "{args:?}");
        assert!(run.stdout.is_empty(), "{args:?}: {}", run.stdout);
        assert!(!run.stderr.contains("panicked"));
        assert!(!dir.exists("props/freezes"), "{args:?}");
    }
    let run = dir.run(&with(&["--out", "c.json"]));
    assert!(
        run.stderr.contains("unexpected argument '--out'"),
        "{}",
        run.stderr
    );
}
