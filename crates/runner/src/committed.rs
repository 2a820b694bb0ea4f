//! Is a spec file committed? SPEC: "a draft that is not committed under `props/` is not a
//! spec". The runner compares the exact bytes it digested with the blob `HEAD` holds for the
//! path. Unless they are identical, the spec is a draft whatever its front matter says: the
//! receipt records `oracle_source: model_draft` and `spec_committed: false`. That includes a
//! repository without commits, a path not in `HEAD`, and any git error inside a repository
//! (for example git refusing a repository owned by another user): failing closed. Only when
//! the root is not inside a git work tree at all, or git is not installed, does the receipt
//! omit `spec_committed` and keep the file's `oracle_source`.

use seedledger_format::OracleSource;
use std::io::Write;
use std::path::Path;
use std::process::{Command, Output, Stdio};

/// Whether a spec file is committed unchanged, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpecState {
    /// `Some(true)`: `HEAD` holds exactly the bytes; `Some(false)`: it does not, or git
    /// failed inside a repository; `None`: not a git work tree, or no git.
    pub committed: Option<bool>,
    /// For `Some(false)` (and for `None`): what git said, for the receipt and the summary.
    pub why: Option<String>,
}

/// Asks git whether `HEAD` holds exactly `bytes` at `rel_path` (see the module docs).
pub(crate) fn spec_committed(root: &Path, rel_path: &Path, bytes: &[u8]) -> SpecState {
    let state = |committed, why: &str| SpecState {
        committed,
        why: (!why.is_empty()).then(|| why.to_string()),
    };
    let dir = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let git = |args: &[&str], input: Option<&[u8]>| -> Result<Output, String> {
        let mut child = Command::new("git")
            .args(args)
            .current_dir(dir)
            .stdin(if input.is_some() {
                Stdio::piped()
            } else {
                Stdio::null()
            })
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| format!("cannot run git: {e}"))?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            let _ = stdin.write_all(input);
        }
        child
            .wait_with_output()
            .map_err(|e| format!("git did not finish: {e}"))
    };
    let inside = match git(&["rev-parse", "--is-inside-work-tree"], None) {
        Ok(out) => out,
        Err(e) => return state(None, &e),
    };
    if !inside.status.success() {
        let stderr = String::from_utf8_lossy(&inside.stderr).trim().to_string();
        return if stderr.contains("not a git repository") {
            state(None, "not inside a git work tree")
        } else {
            state(Some(false), &format!("git failed: {stderr}"))
        };
    }
    let Some(rel) = rel_path.to_str() else {
        return state(Some(false), "the spec's path is not UTF-8");
    };
    let committed = git(
        &["rev-parse", "--verify", "--quiet", &format!("HEAD:./{rel}")],
        None,
    );
    let ours = git(&["hash-object", "--no-filters", "--stdin"], Some(bytes));
    let blob = |o: &Output| {
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
            .filter(|b| !b.is_empty())
    };
    match (committed, ours) {
        (Err(e), _) | (_, Err(e)) => state(Some(false), &e),
        (Ok(head), Ok(ours)) => match (blob(&head), blob(&ours)) {
            (Some(a), Some(b)) if a == b => state(Some(true), ""),
            (Some(_), Some(_)) => state(
                Some(false),
                &format!("{rel} differs from the committed one"),
            ),
            (None, _) => state(Some(false), &format!("{rel} is not in the HEAD commit")),
            (_, None) => state(
                Some(false),
                &format!(
                    "git hash-object failed: {}",
                    String::from_utf8_lossy(&ours.stderr).trim()
                ),
            ),
        },
    }
}

/// The oracle source a receipt may claim for a spec in that state.
pub(crate) fn effective_oracle(declared: OracleSource, committed: Option<bool>) -> OracleSource {
    match committed {
        Some(false) => OracleSource::ModelDraft,
        _ => declared,
    }
}
