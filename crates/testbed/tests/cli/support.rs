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
            .env_remove("SEEDLEDGER_OBSERVE")
            .env_remove("SEEDLEDGER_SYNC")
            .env_remove("SEEDLEDGER_TEST_SYNC_LOG")
            .env_remove("ORDERS_DEMO_BUG")
            .env_remove("ORDERS_LOCALE")
            .env_remove("ORDERS_DEMO_TRIAL_MS");
        without_shard_variables(&mut cmd);
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
    without_shard_variables(&mut cmd);
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
    finish(semantics_command(dir, args))
}

/// The command [`semantics_run`] runs, for a test to add to (an environment variable).
pub fn semantics_command(dir: &Path, args: &[&str]) -> Command {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_semantics_suite"));
    cmd.args(args)
        .current_dir(dir)
        .env_remove("SEEDLEDGER_PATCH_ID")
        .env_remove("SEEDLEDGER_BASE")
        .env_remove("GITHUB_ACTIONS")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("SEEDLEDGER_RUNNER_KEY")
        .env_remove("SEEDLEDGER_OBSERVE")
        .stdin(std::process::Stdio::null());
    without_shard_variables(&mut cmd);
    cmd
}

/// Runs a command to its end with its output in files (a process it leaves behind may hold
/// a pipe open), failing the test if it has not ended after 20 s: a guard against a hang,
/// not a measure of speed.
pub fn run_guarded(mut cmd: Command) -> Run {
    let dir = tempfile::tempdir().unwrap();
    let (out, err) = (dir.path().join("stdout"), dir.path().join("stderr"));
    cmd.stdout(std::fs::File::create(&out).unwrap())
        .stderr(std::fs::File::create(&err).unwrap());
    let mut child = cmd.spawn().unwrap();
    let guard = std::time::Instant::now() + std::time::Duration::from_secs(20);
    let status = loop {
        if let Some(status) = child.try_wait().unwrap() {
            break status;
        }
        if std::time::Instant::now() > guard {
            let _ = child.kill();
            let _ = child.wait();
            panic!(
                "the run has not ended after 20 s (hang guard)\n{}\n{}",
                std::fs::read_to_string(&out).unwrap_or_default(),
                std::fs::read_to_string(&err).unwrap_or_default()
            );
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    };
    Run {
        code: status.code().unwrap_or(-1),
        stdout: std::fs::read_to_string(&out).unwrap(),
        stderr: std::fs::read_to_string(&err).unwrap(),
    }
}

/// The pids the crash suite's `lingers` property wrote in `dir/lingering.pids`.
pub fn lingering_pids(dir: &Path) -> Vec<i32> {
    std::fs::read_to_string(dir.join("lingering.pids"))
        .unwrap_or_default()
        .lines()
        .map(|l| l.trim().parse().unwrap())
        .collect()
}

/// The summary line of stderr that names `pid` as a process `property` left behind.
pub fn lingering_line<'a>(stderr: &'a str, property: &str, pid: i32) -> &'a str {
    stderr
        .lines()
        .find(|l| {
            l.contains("lingering process")
                && l.contains(&format!("`{property}`"))
                && l.contains(&format!("pid {pid} "))
        })
        .unwrap_or_else(|| panic!("pid {pid} of `{property}` is not named:\n{stderr}"))
}

/// `pid` no longer exists (it was killed and reaped), and is killed if it does.
pub fn assert_gone(pid: i32) {
    // SAFETY: kill(2) touches no memory.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    if alive {
        // SAFETY: as above; the test's own leftover.
        unsafe {
            libc::kill(pid, libc::SIGKILL);
        }
    }
    assert!(!alive, "process {pid} outlived the run");
}

/// `cmd` with no CI shard variable of the host leaking in (a CI that shards this suite must
/// not shard the plans of the runs it starts).
pub fn without_shard_variables(cmd: &mut Command) -> &mut Command {
    for vars in seedledger_format::SHARD_VARIABLES {
        cmd.env_remove(vars.total).env_remove(vars.index);
    }
    cmd
}

/// The JSON file at `path`, read (a receipt, say).
pub fn read_json(path: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    serde_json::from_str(&text).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// A JSON array of seeds (a receipt's `planned_seeds`, say) as numbers.
pub fn seeds(v: &serde_json::Value) -> Vec<u64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|s| s.as_u64().unwrap())
        .collect()
}
