//! Bazel's test protocol through the real binary, driven as `bazel test` drives a test binary
//! (the Test Encyclopedia, <https://bazel.build/reference/test-encyclopedia>: "Test sharding",
//! "Initial conditions", "Test interaction with the filesystem"): a clean environment with
//! only the variables it lists (no `LANG`, `TZ=UTC`, `HOME=$TEST_TMPDIR`), the working
//! directory `$TEST_SRCDIR/$TEST_WORKSPACE` (a runfiles tree of symbolic links, the binary
//! among them, started as `./<target>`), a fresh `TEST_TMPDIR`, `TEST_UNDECLARED_OUTPUTS_DIR`
//! and `XML_OUTPUT_FILE` where Bazel puts them, `TEST_PREMATURE_EXIT_FILE`, and for a sharded
//! test `TEST_TOTAL_SHARDS`, `TEST_SHARD_INDEX` (from 0) and `TEST_SHARD_STATUS_FILE`. The
//! checks are the protocol's: the status file touched, the premature-exit file gone after a
//! clean end and left after a property ended the process, the XML well formed with one
//! testcase per property and failures marked, the evidence in the outputs directory (and the
//! shards' receipts merged covering every planned seed once), temporary files in
//! `TEST_TMPDIR`, nothing written in the runfiles tree.
//!
//! `a_real_bazel_runs_the_suite_sharded` runs the same under a real Bazel when one is
//! installed (Debian's `bazel-bootstrap`; see the book, `book/src/running/bazel.md`).

use crate::support::{Run, crash_command, crash_root, finish, read_json, seeds};
use quick_junit::{Report, TestCaseStatus};
use serde_json::Value;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::Command;

const CASES: u64 = 40;

/// One test binary's runfiles and one attempt's files, laid out as Bazel lays them out.
struct Bazel {
    /// Everything: the source tree (props/, fixtures/), the runfiles, the test logs.
    tmp: tempfile::TempDir,
}

/// What one attempt (one shard of one target) left where Bazel looks.
struct Attempt {
    run: Run,
    /// `bazel-testlogs/<target>/shard_k_of_n` (or `<target>` unsharded).
    logs: PathBuf,
    tmpdir: PathBuf,
    runfiles: PathBuf,
}

impl Attempt {
    fn xml(&self) -> PathBuf {
        self.logs.join("test.xml")
    }
    fn outputs(&self) -> PathBuf {
        self.logs.join("test.outputs")
    }
    fn shard_file(&self) -> PathBuf {
        self.logs.join("test.shard")
    }
    fn premature(&self) -> PathBuf {
        self.logs.join("test.exited_prematurely")
    }
    fn receipt_path(&self, property: &str) -> PathBuf {
        self.outputs()
            .join(format!("seedledger/local/{property}.receipt.json"))
    }
    fn receipt(&self, property: &str) -> Value {
        read_json(&self.receipt_path(property))
    }
    /// The JUnit report, read back (well-formed XML, or the test fails).
    fn junit(&self) -> Report {
        let xml = std::fs::read_to_string(self.xml()).unwrap();
        Report::deserialize_from_str(&xml).unwrap_or_else(|e| panic!("{e}\n{xml}"))
    }
    /// `(testcase name, passed)` of the report's one `seedledger` suite.
    fn cases(&self) -> Vec<(String, bool)> {
        let report = self.junit();
        assert_eq!(report.test_suites.len(), 1);
        let suite = &report.test_suites[0];
        assert_eq!(suite.name.as_str(), "seedledger");
        suite
            .test_cases
            .iter()
            .map(|c| {
                let passed = matches!(c.status, TestCaseStatus::Success { .. });
                (c.name.as_str().to_string(), passed)
            })
            .collect()
    }
}

/// Every path under `dir` (following no link), sorted: what a run may not change.
fn tree(dir: &Path) -> Vec<PathBuf> {
    let mut all = Vec::new();
    let mut pending = vec![dir.to_path_buf()];
    while let Some(d) = pending.pop() {
        for entry in std::fs::read_dir(&d).unwrap() {
            let entry = entry.unwrap();
            if entry.file_type().unwrap().is_dir() {
                pending.push(entry.path());
            }
            all.push(entry.path());
        }
    }
    all.sort();
    all
}

impl Bazel {
    /// A source tree with a spec for each of `properties` of the crash suite.
    fn new(properties: &[&str]) -> Bazel {
        Bazel {
            tmp: crash_root(properties),
        }
    }

    fn source(&self) -> &Path {
        self.tmp.path()
    }

    /// `target`'s runfiles tree, made once: `runfiles/__main__/` with the source's files and
    /// the test binary as symbolic links (as Bazel makes it on Linux), its directories real.
    fn runfiles(&self, target: &str) -> PathBuf {
        let srcdir = self.source().join(format!("bazel-bin/{target}.runfiles"));
        let main = srcdir.join("__main__");
        if main.exists() {
            return srcdir;
        }
        for sub in ["props", "fixtures"] {
            std::fs::create_dir_all(main.join(sub)).unwrap();
            for entry in std::fs::read_dir(self.source().join(sub)).unwrap() {
                let entry = entry.unwrap();
                std::os::unix::fs::symlink(entry.path(), main.join(sub).join(entry.file_name()))
                    .unwrap();
            }
        }
        std::os::unix::fs::symlink(env!("CARGO_BIN_EXE_crash_suite"), main.join(target)).unwrap();
        srcdir
    }

    /// Runs `target` (the crash suite with `args`) as `bazel test` runs one attempt of it:
    /// shard `shard = (index from 0, total)` of a sharded test, or an unsharded one.
    fn test(&self, target: &str, shard: Option<(u64, u64)>, args: &[&str]) -> Attempt {
        self.test_with(target, shard, args, |_| {})
    }

    /// [`Bazel::test`] with the environment changed by `adjust` first (a broken wrapper).
    fn test_with(
        &self,
        target: &str,
        shard: Option<(u64, u64)>,
        args: &[&str],
        adjust: impl FnOnce(&mut Vec<(&str, String)>),
    ) -> Attempt {
        let srcdir = self.runfiles(target);
        let logs = self.source().join(match shard {
            Some((k, n)) => format!("bazel-testlogs/{target}/shard_{}_of_{n}", k + 1),
            None => format!("bazel-testlogs/{target}"),
        });
        let tmpdir = self
            .source()
            .join(format!("_tmp/{target}-{}", shard.map_or(0, |(k, _)| k + 1)));
        // Fresh and empty, as Bazel's test setup leaves them.
        for dir in [&logs, &tmpdir] {
            if dir.exists() {
                std::fs::remove_dir_all(dir).unwrap();
            }
        }
        std::fs::create_dir_all(logs.join("test.outputs")).unwrap();
        std::fs::create_dir_all(&tmpdir).unwrap();
        let mut cmd = Command::new(srcdir.join("__main__").join(target));
        cmd.arg0(format!("./{target}"))
            .args(args)
            .current_dir(srcdir.join("__main__"))
            .env_clear()
            .stdin(std::process::Stdio::null());
        let user = std::env::var("USER").unwrap_or_else(|_| "root".into());
        let path = |p: &Path| p.to_str().unwrap().to_string();
        let mut env: Vec<(&str, String)> = vec![
            (
                "PATH",
                "/usr/local/bin:/usr/local/sbin:/usr/bin:/usr/sbin:/bin:/sbin:.".into(),
            ),
            ("HOME", path(&tmpdir)),
            ("USER", user.clone()),
            ("LOGNAME", user),
            ("TZ", "UTC".into()),
            ("SHLVL", "2".into()),
            ("PWD", path(&srcdir.join("__main__"))),
            // A host TMPDIR Bazel passes on; the run must use TEST_TMPDIR instead.
            ("TMPDIR", "/tmp".into()),
            ("BAZEL_TEST", "1".into()),
            ("TEST_BINARY", format!("./{target}")),
            ("TEST_TARGET", format!("//:{target}")),
            ("TEST_SIZE", "medium".into()),
            ("TEST_TIMEOUT", "300".into()),
            ("TEST_SRCDIR", path(&srcdir)),
            ("TEST_WORKSPACE", "__main__".into()),
            ("TEST_TMPDIR", path(&tmpdir)),
            (
                "TEST_UNDECLARED_OUTPUTS_DIR",
                path(&logs.join("test.outputs")),
            ),
            ("XML_OUTPUT_FILE", path(&logs.join("test.xml"))),
            (
                "TEST_PREMATURE_EXIT_FILE",
                path(&logs.join("test.exited_prematurely")),
            ),
            (
                "TEST_INFRASTRUCTURE_FAILURE_FILE",
                path(&logs.join("test.infrastructure_failure")),
            ),
            (
                "TEST_WARNINGS_OUTPUT_FILE",
                path(&logs.join("test.warnings")),
            ),
        ];
        if let Some((k, n)) = shard {
            env.push(("TEST_TOTAL_SHARDS", n.to_string()));
            env.push(("TEST_SHARD_INDEX", k.to_string()));
            env.push(("TEST_SHARD_STATUS_FILE", path(&logs.join("test.shard"))));
        }
        adjust(&mut env);
        cmd.envs(env);
        let before = tree(&srcdir);
        let run = finish(cmd);
        assert_eq!(
            tree(&srcdir),
            before,
            "the run wrote into its runfiles tree"
        );
        Attempt {
            run,
            logs,
            tmpdir,
            runfiles: srcdir,
        }
    }

    /// `gate merge` of `property`'s receipts of `attempts` into OUT; the merged receipt.
    fn merge(&self, property: &str, attempts: &[Attempt], out: &str) -> Value {
        let mut args = vec![
            "gate".to_string(),
            "merge".into(),
            "--out".into(),
            out.into(),
        ];
        args.extend(
            attempts
                .iter()
                .map(|a| a.receipt_path(property).to_str().unwrap().to_string()),
        );
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = finish(crash_command(self.source(), &args));
        assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
        read_json(
            &self
                .source()
                .join(format!("{out}/local/{property}.receipt.json")),
        )
    }
}

/// A passing attempt followed the protocol: exit 0, the status file touched exactly when
/// sharded, the premature-exit file gone, the XML one passing testcase per property, the
/// receipts and rows in the outputs directory, the probe in TEST_TMPDIR, and the note says so.
fn assert_clean_pass(a: &Attempt, sharded: bool, properties: &[&str]) {
    let all = format!("{}\n{}", a.run.stdout, a.run.stderr);
    assert_eq!(a.run.code, 0, "{all}");
    assert_eq!(a.shard_file().exists(), sharded, "{all}");
    assert!(!a.premature().exists(), "premature-exit file left: {all}");
    let want: Vec<(String, bool)> = properties.iter().map(|p| (p.to_string(), true)).collect();
    assert_eq!(a.cases(), want);
    for p in properties {
        let rows = a
            .outputs()
            .join(format!("seedledger/local/{p}.witness.jsonl"));
        assert!(rows.is_file(), "{}: {all}", rows.display());
    }
    assert!(
        a.tmpdir.join("crash_suite.temp-probe").is_file(),
        "no temporary file in TEST_TMPDIR: {all}"
    );
    assert!(
        !a.runfiles.join("__main__/target").exists(),
        "evidence went to the runfiles"
    );
    let note = a
        .run
        .stderr
        .lines()
        .find(|l| l.starts_with("note: Bazel's test protocol: "))
        .unwrap_or_else(|| panic!("no protocol note: {all}"));
    for said in [
        "evidence in TEST_UNDECLARED_OUTPUTS_DIR",
        "JUnit to XML_OUTPUT_FILE",
        "(TEST_TMPDIR)",
        "TEST_PREMATURE_EXIT_FILE created, removed at a clean end",
    ] {
        assert!(note.contains(said), "{said}: {note}");
    }
    assert_eq!(
        note.contains("TEST_SHARD_STATUS_FILE touched"),
        sharded,
        "{note}"
    );
}

#[test]
fn every_shard_count_follows_the_protocol_and_the_shards_merge_into_the_plan() {
    let props = ["passes", "writes_temp"];
    let bazel = Bazel::new(&props);
    let cases = CASES.to_string();
    let args = [
        "prop",
        "run",
        "--property",
        props[0],
        "--property",
        props[1],
        "--cases",
        &cases,
    ];
    let plan: Vec<u64> = (1..=CASES).collect();
    // Unsharded: the whole plan, no status file.
    let whole = bazel.test("suite", None, &args);
    assert_clean_pass(&whole, false, &props);
    assert_eq!(seeds(&whole.receipt("passes")["planned_seeds"]), plan);
    for n in [1u64, 2, 3, 8, 13] {
        let target = format!("suite_{n}");
        let attempts: Vec<Attempt> = (0..n)
            .map(|k| {
                let a = bazel.test(&target, Some((k, n)), &args);
                assert_clean_pass(&a, true, &props);
                for p in props {
                    let want: Vec<u64> =
                        plan.iter().copied().filter(|s| (s - 1) % n == k).collect();
                    assert_eq!(seeds(&a.receipt(p)["planned_seeds"]), want, "{p} {k}/{n}");
                }
                a
            })
            .collect();
        for p in props {
            // Every planned seed ran in exactly one shard...
            let mut ran: Vec<u64> = attempts
                .iter()
                .flat_map(|a| seeds(&a.receipt(p)["attempted_seeds"]))
                .collect();
            ran.sort_unstable();
            assert_eq!(ran, plan, "{p} over {n} shards");
            // ...and the shards' receipts merge into one of the whole plan.
            let merged = bazel.merge(p, &attempts, &format!("merged-{n}"));
            assert_eq!(seeds(&merged["planned_seeds"]), plan);
            assert_eq!(seeds(&merged["attempted_seeds"]), plan);
        }
    }
}

/// `passes` passed and `exits_zero` failed (exit 1, the XML's testcases), and the
/// premature-exit file is left or not.
fn assert_exits_zero_failed(a: &Attempt, premature_left: bool) {
    let all = format!("{}\n{}", a.run.stdout, a.run.stderr);
    assert_eq!(a.run.code, 1, "{all}");
    assert_eq!(a.premature().exists(), premature_left, "{all}");
    let want = [("passes", true), ("exits_zero", false)].map(|(p, ok)| (p.to_string(), ok));
    assert_eq!(a.cases(), want, "{all}");
}

#[test]
fn a_property_that_exits_the_process_leaves_the_premature_exit_file() {
    let bazel = Bazel::new(&["passes", "exits_zero"]);
    let args = [
        "prop",
        "run",
        "--property",
        "passes",
        "--property",
        "exits_zero",
        "--seeds",
        "101..=105",
        "--jobs",
        "1",
    ];
    // In the run process, the exit ends it: the file stays (and Bazel fails the test).
    let a = bazel.test("exits", None, &args);
    assert_exits_zero_failed(&a, true);
    // Isolated, the exit is a failing trial and the run ends cleanly: the file goes, the
    // exit status and the XML still say the property failed.
    let mut isolated = args.to_vec();
    isolated.push("--isolate");
    let a = bazel.test("exits_isolated", None, &isolated);
    assert_exits_zero_failed(&a, false);
    assert_eq!(seeds(&a.receipt("exits_zero")["failing_seeds"]), vec![103]);
}

#[test]
fn refusals_and_explicit_options_under_bazel() {
    let bazel = Bazel::new(&["passes", "writes_temp"]);
    // Half of Bazel's pair: nothing runs, nothing is written, no status file; the run ended
    // as it meant to (exit 2), so no premature-exit file either.
    let args = ["prop", "run", "--property", "passes", "--cases", "40"];
    let a = bazel.test_with("half", Some((0, 4)), &args, |env| {
        env.retain(|(name, _)| *name != "TEST_SHARD_INDEX");
    });
    assert_eq!(a.run.code, 2, "{}", a.run.stderr);
    assert!(
        a.run
            .stderr
            .contains("TEST_TOTAL_SHARDS=\"4\" is set but TEST_SHARD_INDEX is not"),
        "{}",
        a.run.stderr
    );
    assert!(!a.shard_file().exists() && !a.premature().exists() && !a.xml().exists());
    assert_eq!(std::fs::read_dir(a.outputs()).unwrap().count(), 0);
    // Out of range: the same refusal.
    let a = bazel.test("range", Some((4, 4)), &args);
    assert_eq!(a.run.code, 2, "{}", a.run.stderr);
    assert!(a.run.stderr.contains("out of range"), "{}", a.run.stderr);
    assert!(!a.shard_file().exists() && !a.premature().exists());

    // An explicit part wins, so every shard would run it: the status file is not touched
    // (a Bazel that checks it fails the test) and the note says why.
    let mut explicit = args.to_vec();
    explicit.extend(["--partition", "slice:1/2"]);
    let a = bazel.test("explicit", Some((2, 3)), &explicit);
    assert_eq!(a.run.code, 0, "{}", a.run.stderr);
    assert!(!a.shard_file().exists());
    assert!(
        a.run
            .stderr
            .contains("TEST_SHARD_STATUS_FILE not touched: --partition slice:1/2 was given"),
        "{}",
        a.run.stderr
    );
    let want: Vec<u64> = (1..=40).filter(|s| s % 2 == 1).collect();
    assert_eq!(seeds(&a.receipt("passes")["planned_seeds"]), want);

    // --out and --junit win over the outputs directory and XML_OUTPUT_FILE.
    let out = bazel.source().join("given-out");
    let junit = bazel.source().join("given.xml");
    let mut given = args.to_vec();
    let (out_s, junit_s) = (out.to_str().unwrap(), junit.to_str().unwrap());
    given.extend(["--out", out_s, "--junit", junit_s]);
    let a = bazel.test("given", None, &given);
    assert_eq!(a.run.code, 0, "{}", a.run.stderr);
    assert!(out.join("local/passes.receipt.json").is_file());
    assert!(junit.is_file());
    assert!(!a.xml().exists());
    assert_eq!(std::fs::read_dir(a.outputs()).unwrap().count(), 0);
    assert!(
        a.run.stderr.contains("(not TEST_UNDECLARED_OUTPUTS_DIR ")
            && a.run.stderr.contains("(not XML_OUTPUT_FILE "),
        "{}",
        a.run.stderr
    );
}

/// The repositories Bazel 4's `sh_test` reaches for and would download (a coverage tool, the
/// C++ and Java rules for its launcher and toolchains), each replaced by a local stub that
/// forwards to Bazel's native rules, so that no test reaches the network.
const STUB_REPOSITORIES: [(&str, &str, &str); 3] = [
    (
        "remote_coverage_tools",
        "BUILD",
        "package(default_visibility = [\"//visibility:public\"])\nfilegroup(name = \"coverage_report_generator\", srcs = [\"BUILD\"])\n",
    ),
    ("rules_cc", "cc/defs.bzl", "cc"),
    ("rules_java", "java/defs.bzl", "java"),
];

/// The `defs.bzl` of a stub rules repository: each rule of `lang` forwards to Bazel's own.
fn forwarding_rules(lang: &str) -> String {
    let rules: &[&str] = if lang == "cc" {
        &[
            "cc_binary",
            "cc_library",
            "cc_test",
            "cc_import",
            "cc_toolchain",
            "cc_toolchain_suite",
            "cc_proto_library",
            "objc_library",
        ]
    } else {
        &[
            "java_binary",
            "java_import",
            "java_library",
            "java_plugin",
            "java_runtime",
            "java_test",
            "java_toolchain",
            "java_proto_library",
            "java_lite_proto_library",
            "java_package_configuration",
        ]
    };
    rules
        .iter()
        .map(|r| format!("def {r}(**kwargs):\n    native.{r}(**kwargs)\n"))
        .collect()
}

#[test]
#[ignore = "needs a real Bazel on PATH ($SEEDLEDGER_BAZEL, default `bazel`): Debian's bazel-bootstrap; .ci/run installs it and runs this test"]
fn a_real_bazel_runs_the_suite_sharded() {
    let ws = crash_root(&["passes", "writes_temp", "exits_zero"]);
    let elsewhere = tempfile::tempdir().unwrap();
    let mut overrides = Vec::new();
    for (name, file, text) in STUB_REPOSITORIES {
        let repo = elsewhere.path().join("stubs").join(name);
        let path = repo.join(file);
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        std::fs::write(repo.join("WORKSPACE"), "").unwrap();
        std::fs::write(repo.join("BUILD"), "").unwrap();
        let text = match text {
            "cc" | "java" => forwarding_rules(text),
            build => build.to_string(),
        };
        std::fs::write(&path, text).unwrap();
        if file != "BUILD" {
            std::fs::write(path.parent().unwrap().join("BUILD"), "").unwrap();
        }
        overrides.push(format!("--override_repository={name}={}", repo.display()));
    }
    std::os::unix::fs::symlink(
        env!("CARGO_BIN_EXE_crash_suite"),
        ws.path().join("crash_suite"),
    )
    .unwrap();
    std::fs::write(ws.path().join("WORKSPACE"), "").unwrap();
    let counts = [1u64, 2, 3, 8, 13];
    std::fs::write(
        ws.path().join("BUILD"),
        format!(
            r#"DATA = glob(["props/*.md", "fixtures/*.json"])
[sh_test(
    name = "suite_%d" % n,
    srcs = ["crash_suite"],
    data = DATA,
    args = ["prop", "run", "--property", "passes", "--property", "writes_temp", "--cases", "{CASES}"],
    shard_count = n,
) for n in {counts:?}]
sh_test(
    name = "exits",
    srcs = ["crash_suite"],
    data = DATA,
    args = ["prop", "run", "--property", "passes", "--property", "exits_zero", "--seeds", "101..=105", "--jobs", "1"],
)
"#
        ),
    )
    .unwrap();
    let bazel = std::env::var("SEEDLEDGER_BAZEL").unwrap_or_else(|_| "bazel".into());
    let out = Command::new(&bazel)
        .current_dir(ws.path())
        .arg("--batch")
        .arg("--nohome_rc")
        .arg(format!(
            "--output_user_root={}",
            elsewhere.path().join("root").display()
        ))
        .args(["test", "//:all", "--keep_going", "--test_output=errors"])
        .args(&overrides)
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap_or_else(|e| {
            panic!("cannot start `{bazel}` (install Debian's bazel-bootstrap): {e}")
        });
    let log = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // 3: the build passed and some test failed (`exits`, and it alone).
    assert_eq!(out.status.code(), Some(3), "{log}");
    assert!(
        !log.contains("Download from"),
        "Bazel reached for the network:\n{log}"
    );
    let outcome = |target: &str| {
        log.lines()
            .find(|l| l.starts_with(&format!("//:{target} ")))
            .unwrap_or_else(|| panic!("no outcome for {target}:\n{log}"))
            .to_string()
    };
    assert!(outcome("exits").contains("FAILED"), "{log}");
    let testlogs = ws.path().join("bazel-testlogs");
    let plan: Vec<u64> = (1..=CASES).collect();
    for n in counts {
        assert!(outcome(&format!("suite_{n}")).contains("PASSED"), "{log}");
        let mut receipts = Vec::new();
        for k in 0..n {
            // Bazel runs a test with shard_count = 1 unsharded.
            let dir = match n {
                1 => testlogs.join("suite_1"),
                _ => testlogs.join(format!("suite_{n}/shard_{}_of_{n}", k + 1)),
            };
            assert_eq!(dir.join("test.shard").exists(), n > 1, "{}", dir.display());
            let xml = std::fs::read_to_string(dir.join("test.xml")).unwrap();
            let report = Report::deserialize_from_str(&xml).unwrap();
            let names: Vec<&str> = report.test_suites[0]
                .test_cases
                .iter()
                .map(|c| c.name.as_str())
                .collect();
            assert_eq!(names, ["passes", "writes_temp"], "{xml}");
            let test_log = std::fs::read_to_string(dir.join("test.log")).unwrap();
            assert!(
                test_log.contains("note: Bazel's test protocol: "),
                "{test_log}"
            );
            // The undeclared outputs, zipped by Bazel: the evidence of this shard.
            let unzipped = elsewhere.path().join(format!("outputs/{n}/{k}"));
            std::fs::create_dir_all(&unzipped).unwrap();
            let zip = dir.join("test.outputs/outputs.zip");
            let unzip = Command::new("unzip")
                .arg("-q")
                .arg(&zip)
                .arg("-d")
                .arg(&unzipped)
                .output()
                .expect("unzip");
            assert!(
                unzip.status.success(),
                "unzip {}: {}{}",
                zip.display(),
                String::from_utf8_lossy(&unzip.stderr),
                test_log
            );
            let receipt = unzipped.join("seedledger/local/passes.receipt.json");
            assert!(receipt.is_file(), "{}", receipt.display());
            assert!(
                unzipped
                    .join("seedledger/local/passes.witness.jsonl")
                    .is_file()
            );
            receipts.push(receipt.to_str().unwrap().to_string());
        }
        let m = if n == 1 {
            // Unsharded: the receipt is the whole plan's.
            read_json(Path::new(&receipts[0]))
        } else {
            let merged = format!("merged-{n}");
            let mut args = vec!["gate", "merge", "--out", &merged];
            args.extend(receipts.iter().map(String::as_str));
            let run = finish(crash_command(ws.path(), &args));
            assert_eq!(run.code, 0, "{}\n{}", run.stdout, run.stderr);
            read_json(
                &ws.path()
                    .join(format!("{merged}/local/passes.receipt.json")),
            )
        };
        assert_eq!(seeds(&m["planned_seeds"]), plan, "{n} shards");
        assert_eq!(seeds(&m["attempted_seeds"]), plan, "{n} shards");
    }
    let xml = std::fs::read_to_string(testlogs.join("exits/test.xml")).unwrap();
    let report = Report::deserialize_from_str(&xml).unwrap();
    let exits: Vec<(&str, bool)> = report.test_suites[0]
        .test_cases
        .iter()
        .map(|c| {
            let passed = matches!(c.status, TestCaseStatus::Success { .. });
            (c.name.as_str(), passed)
        })
        .collect();
    assert_eq!(exits, [("passes", true), ("exits_zero", false)], "{xml}");
}
