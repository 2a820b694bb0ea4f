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

/// `Some(true)`: `HEAD` holds exactly `bytes` at `rel_path`; `Some(false)`: it does not, or git
/// failed inside a repository; `None`: not a git work tree, or no git.
pub(crate) fn spec_committed(root: &Path, rel_path: &Path, bytes: &[u8]) -> Option<bool> {
    let dir = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let git = |args: &[&str], input: Option<&[u8]>| -> Option<Output> {
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
            .ok()?;
        if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
            let _ = stdin.write_all(input);
        }
        child.wait_with_output().ok()
    };
    let inside = git(&["rev-parse", "--is-inside-work-tree"], None)?;
    if !inside.status.success() {
        let stderr = String::from_utf8_lossy(&inside.stderr);
        return if stderr.contains("not a git repository") {
            None
        } else {
            Some(false)
        };
    }
    let rel = rel_path.to_str()?;
    let committed = git(
        &["rev-parse", "--verify", "--quiet", &format!("HEAD:./{rel}")],
        None,
    )?;
    let ours = git(&["hash-object", "--no-filters", "--stdin"], Some(bytes))?;
    let blob = |o: &Output| {
        o.status
            .success()
            .then(|| String::from_utf8_lossy(&o.stdout).trim().to_string())
    };
    Some(matches!((blob(&committed), blob(&ours)), (Some(a), Some(b)) if !a.is_empty() && a == b))
}

/// The oracle source a receipt may claim for a spec in that state.
pub(crate) fn effective_oracle(declared: OracleSource, committed: Option<bool>) -> OracleSource {
    match committed {
        Some(false) => OracleSource::ModelDraft,
        _ => declared,
    }
}
