//! Bazel's test protocol, as Bazel's Test Encyclopedia states it
//! (<https://bazel.build/reference/test-encyclopedia>): what `prop run` does when `bazel test`
//! runs it (see the book, `book/src/running/bazel.md`).
//!
//! | variable | what `prop run` does |
//! |---|---|
//! | `TEST_TOTAL_SHARDS` / `TEST_SHARD_INDEX` | runs the shard's part of the planned seeds (`partition/ci.rs` in the format crate) |
//! | `TEST_SHARD_STATUS_FILE` | touched (created, or its modification time set) when the part came from Bazel's pair: the runner supports sharding |
//! | `TEST_UNDECLARED_OUTPUTS_DIR` | receipts and witness rows go to `$TEST_UNDECLARED_OUTPUTS_DIR/seedledger` unless `--out` says otherwise |
//! | `XML_OUTPUT_FILE` | the JUnit report is written there unless `--junit` says otherwise |
//! | `TEST_TMPDIR` | the run process (and every process it starts) gets it as `TMPDIR` |
//! | `TEST_PREMATURE_EXIT_FILE` | created at the start, removed at a clean end: a run whose run process ended in a property (`std::process::exit(0)` included), that crashed, or that was stopped by a signal leaves it, and Bazel marks the test failed |
//!
//! Only the supervisor (the process Bazel started) follows the protocol's files; the
//! supervised worker reads the same variables for the plan and the output directory only.
//! Relative paths are taken from the directory the process started in (Bazel's test setup
//! passes absolute ones). A value set but empty counts as unset.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// The test protocol's variables `prop run` reads, each as a path ([`anchored`]).
///
/// [`anchored`]: seedledger_runner::engine::anchored
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub(crate) struct Protocol {
    /// `TEST_SHARD_STATUS_FILE`.
    pub shard_status_file: Option<PathBuf>,
    /// `TEST_PREMATURE_EXIT_FILE`.
    pub premature_exit_file: Option<PathBuf>,
    /// `TEST_UNDECLARED_OUTPUTS_DIR`.
    pub outputs_dir: Option<PathBuf>,
    /// `XML_OUTPUT_FILE`.
    pub xml_output_file: Option<PathBuf>,
    /// `TEST_TMPDIR`.
    pub tmpdir: Option<PathBuf>,
}

/// Where the evidence goes inside `TEST_UNDECLARED_OUTPUTS_DIR` (as in `target/seedledger`).
pub(crate) const OUTPUTS_SUBDIR: &str = "seedledger";

impl Protocol {
    /// The variables of this process's environment.
    pub fn from_env() -> Protocol {
        Protocol::read(|name| std::env::var_os(name))
    }

    /// The variables `get` returns (`None`: unset).
    pub fn read(get: impl Fn(&str) -> Option<OsString>) -> Protocol {
        let path = |name: &str| {
            get(name)
                .filter(|v| !v.is_empty())
                .map(|v| seedledger_runner::engine::anchored(Path::new(&v)))
        };
        Protocol {
            shard_status_file: path("TEST_SHARD_STATUS_FILE"),
            premature_exit_file: path("TEST_PREMATURE_EXIT_FILE"),
            outputs_dir: path("TEST_UNDECLARED_OUTPUTS_DIR"),
            xml_output_file: path("XML_OUTPUT_FILE"),
            tmpdir: path("TEST_TMPDIR"),
        }
    }

    /// The evidence directory when `--out` is not given: inside the undeclared outputs.
    pub fn evidence_dir(&self) -> Option<PathBuf> {
        self.outputs_dir
            .as_ref()
            .map(|dir| dir.join(OUTPUTS_SUBDIR))
    }

    /// The environment the run process is started with on top of this one's.
    pub fn worker_env(&self) -> Vec<(&'static str, OsString)> {
        self.tmpdir
            .iter()
            .map(|dir| ("TMPDIR", dir.clone().into_os_string()))
            .collect()
    }
}

/// `TEST_PREMATURE_EXIT_FILE`, created: removed by [`PrematureExit::clean_end`] only, so that
/// any other way out of the process (an exit from a property's code, a signal, a panic that
/// aborts) leaves it for Bazel to see.
#[derive(Debug)]
pub(crate) struct PrematureExit {
    path: PathBuf,
}

impl PrematureExit {
    /// Creates the file (empty).
    pub fn create(path: &Path) -> Result<PrematureExit, String> {
        std::fs::write(path, b"").map_err(|e| {
            format!(
                "cannot create TEST_PREMATURE_EXIT_FILE `{}`: {e}; no trial runs",
                path.display()
            )
        })?;
        Ok(PrematureExit {
            path: path.to_path_buf(),
        })
    }

    /// The run came to a clean end: the file goes. A file that cannot be removed is said, and
    /// Bazel then fails the test (as it must: it cannot tell this end from a premature one).
    pub fn clean_end(self) {
        match std::fs::remove_file(&self.path) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => errln!(
                "warning: cannot remove TEST_PREMATURE_EXIT_FILE `{}`: {e}; Bazel will report the test as exited prematurely",
                self.path.display()
            ),
        }
    }
}

/// Creates `path`, or sets its modification time to now: how a runner tells Bazel it
/// supports sharding.
pub(crate) fn touch(path: &Path) -> Result<(), String> {
    std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .and_then(|file| file.set_modified(std::time::SystemTime::now()))
        .map_err(|e| {
            format!(
                "cannot touch TEST_SHARD_STATUS_FILE `{}`: {e}; no trial runs",
                path.display()
            )
        })
}

/// What a run did of the protocol, for its `note:` line.
#[derive(Debug, Default)]
pub(crate) struct Honoured {
    items: Vec<String>,
}

impl Honoured {
    pub fn push(&mut self, item: impl Into<String>) {
        self.items.push(item.into());
    }

    /// `note: Bazel's test protocol: A; B; ...` (nothing when nothing applied).
    pub fn line(&self) -> Option<String> {
        (!self.items.is_empty())
            .then(|| format!("note: Bazel's test protocol: {}", self.items.join("; ")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(vars: &[(&str, &str)]) -> Protocol {
        Protocol::read(|name| {
            vars.iter()
                .find(|(n, _)| *n == name)
                .map(|(_, v)| OsString::from(v))
        })
    }

    #[test]
    fn each_variable_is_read_and_an_empty_one_is_unset() {
        let p = read(&[
            ("TEST_SHARD_STATUS_FILE", "/b/shard"),
            ("TEST_PREMATURE_EXIT_FILE", "/b/exit"),
            ("TEST_UNDECLARED_OUTPUTS_DIR", "/b/out"),
            ("XML_OUTPUT_FILE", "/b/test.xml"),
            ("TEST_TMPDIR", ""),
        ]);
        assert_eq!(p.shard_status_file.as_deref(), Some(Path::new("/b/shard")));
        assert_eq!(p.premature_exit_file.as_deref(), Some(Path::new("/b/exit")));
        assert_eq!(p.xml_output_file.as_deref(), Some(Path::new("/b/test.xml")));
        assert_eq!(p.evidence_dir(), Some(PathBuf::from("/b/out/seedledger")));
        assert_eq!(p.tmpdir, None);
        assert!(p.worker_env().is_empty());
        assert_eq!(read(&[("TEST_TMPDIR", "")]), Protocol::default());
    }

    #[test]
    fn the_run_process_gets_test_tmpdir_as_tmpdir_and_relative_paths_are_anchored() {
        let p = read(&[
            ("TEST_TMPDIR", "/b/tmp"),
            ("XML_OUTPUT_FILE", "logs/test.xml"),
        ]);
        assert_eq!(p.worker_env(), vec![("TMPDIR", OsString::from("/b/tmp"))]);
        let xml = p.xml_output_file.unwrap();
        assert!(
            xml.is_absolute() && xml.ends_with("logs/test.xml"),
            "{xml:?}"
        );
    }

    #[test]
    fn the_premature_exit_file_stays_unless_the_end_is_clean() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("exit");
        let guard = PrematureExit::create(&path).unwrap();
        assert!(path.exists());
        drop(guard);
        assert!(path.exists(), "dropped without a clean end: the file stays");
        PrematureExit::create(&path).unwrap().clean_end();
        assert!(!path.exists());
        let e = PrematureExit::create(&dir.path().join("no/such/dir/exit")).unwrap_err();
        assert!(
            e.contains("TEST_PREMATURE_EXIT_FILE") && e.contains("no trial runs"),
            "{e}"
        );
    }

    #[test]
    fn touching_creates_the_status_file_or_moves_its_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("shard");
        touch(&path).unwrap();
        assert!(path.exists());
        let old = std::time::SystemTime::UNIX_EPOCH + std::time::Duration::from_secs(1_000_000);
        std::fs::File::options()
            .append(true)
            .open(&path)
            .unwrap()
            .set_modified(old)
            .unwrap();
        touch(&path).unwrap();
        let now = std::fs::metadata(&path).unwrap().modified().unwrap();
        assert!(now > old);
        assert_eq!(
            std::fs::read(&path).unwrap(),
            b"",
            "touching writes nothing"
        );
        let e = touch(&dir.path().join("no/such/dir/shard")).unwrap_err();
        assert!(e.contains("TEST_SHARD_STATUS_FILE"), "{e}");
    }
}
