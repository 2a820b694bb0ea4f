//! A scratch copy of the tests' own props/ and fixtures/ (`tests/data/`: the example suite's
//! specs and fixtures as the tests expect them, so a bug planted in the workspace's
//! `fixtures/` cannot fail them), and running `testbed` in it with no CI environment leaking
//! in from the caller.

use std::path::{Path, PathBuf};
use std::process::Command;

pub struct Root {
    tmp: tempfile::TempDir,
}

pub struct Run {
    pub code: i32,
    pub stdout: String,
    pub stderr: String,
}

impl Root {
    pub fn new() -> Root {
        let tmp = tempfile::tempdir().unwrap();
        let repo = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data");
        for sub in ["props", "fixtures"] {
            std::fs::create_dir_all(tmp.path().join(sub)).unwrap();
            for entry in std::fs::read_dir(repo.join(sub)).unwrap() {
                let entry = entry.unwrap();
                std::fs::copy(entry.path(), tmp.path().join(sub).join(entry.file_name())).unwrap();
            }
        }
        Root { tmp }
    }

    pub fn path(&self) -> &Path {
        self.tmp.path()
    }

    /// `xtask ARGS` in the scratch root, not yet started.
    pub fn command(&self, args: &[&str]) -> Command {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_testbed"));
        cmd.args(args)
            .current_dir(self.path())
            .env_remove("SEEDLEDGER_PATCH_ID")
            .env_remove("GITHUB_ACTIONS")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("SEEDLEDGER_RUNNER_KEY")
            .env_remove("SEEDLEDGER_BASE")
            .env_remove("SEEDLEDGER_CASES")
            .env_remove("ORDERS_DEMO_BUG")
            .env_remove("ORDERS_LOCALE")
            .env_remove("ORDERS_DEMO_TRIAL_MS");
        cmd
    }

    pub fn run(&self, args: &[&str]) -> Run {
        self.run_env(args, &[])
    }

    /// Runs with extra environment variables.
    pub fn run_env(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        let mut cmd = self.command(args);
        for (k, v) in env {
            cmd.env(k, v);
        }
        let out = cmd.output().unwrap();
        Run {
            code: out.status.code().unwrap_or(-1),
            stdout: String::from_utf8(out.stdout).unwrap(),
            stderr: String::from_utf8(out.stderr).unwrap(),
        }
    }

    pub fn receipt_path(&self, patch: &str, id: &str) -> PathBuf {
        self.path()
            .join(format!("target/seedledger/{patch}/{id}.receipt.json"))
    }

    /// Plants a data bug: a product with a negative price makes `order_total_nonneg` fail on
    /// the real code.
    pub fn plant_negative_price(&self) {
        let path = self.path().join("fixtures/order.json");
        let text = std::fs::read_to_string(&path).unwrap();
        let text = text.replace("\"price_cents\": 899", "\"price_cents\": -899");
        std::fs::write(path, text).unwrap();
    }
}

/// A scratch root for the test-only `crash_suite` binary: a spec for each of `properties`
/// (on an empty JSON fixture).
pub fn crash_root(properties: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("props")).unwrap();
    std::fs::create_dir_all(tmp.path().join("fixtures")).unwrap();
    std::fs::write(tmp.path().join("fixtures/empty.json"), "{}\n").unwrap();
    for id in properties {
        std::fs::write(
            tmp.path().join(format!("props/{id}.md")),
            format!(
                "---\nproperty_id: {id}\nbound: no crash\nfixture: fixtures/empty.json\noracle_source: human_reviewed\n---\nA property of the crash suite.\n"
            ),
        )
        .unwrap();
    }
    tmp
}

/// `crash_suite ARGS` in `dir`, not started, with no CI or runner environment leaking in.
pub fn crash_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_crash_suite"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("SEEDLEDGER_PATCH_ID")
        .env_remove("SEEDLEDGER_BASE")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("SEEDLEDGER_RUNNER_KEY")
        .env_remove("RUST_BACKTRACE")
        .stdin(std::process::Stdio::null());
    cmd
}

/// Runs a command to its end.
pub fn finish(mut cmd: Command) -> Run {
    let out = cmd.output().unwrap();
    Run {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8(out.stdout).unwrap(),
        stderr: String::from_utf8(out.stderr).unwrap(),
    }
}

/// A scratch root for the test-only `semantics_suite` binary: a spec for each of
/// `properties` (`fixture: none`).
pub fn semantics_root(properties: &[&str]) -> tempfile::TempDir {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("props")).unwrap();
    for id in properties {
        std::fs::write(
            tmp.path().join(format!("props/{id}.md")),
            format!(
                "---\nproperty_id: {id}\nbound: b\nfixture: none\noracle_source: human_reviewed\n---\nA property of the semantics suite.\n"
            ),
        )
        .unwrap();
    }
    tmp
}

/// `semantics_suite ARGS` in `dir`, run to its end, with no CI or runner environment leaking in.
pub fn semantics_run(dir: &Path, args: &[&str]) -> Run {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_semantics_suite"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("SEEDLEDGER_PATCH_ID")
        .env_remove("SEEDLEDGER_BASE")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("SEEDLEDGER_RUNNER_KEY")
        .stdin(std::process::Stdio::null());
    finish(cmd)
}
