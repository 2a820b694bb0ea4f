//! Is a spec file committed? SPEC: "a draft that is not committed under `props/` is not a
//! spec". The runner asks git; a spec file that is untracked or differs from `HEAD` is a
//! draft, whatever its front matter says, so the receipt records `oracle_source:
//! model_draft` and `spec_committed: false`. Where git cannot tell (not installed, not a
//! repository) the receipt omits `spec_committed` and keeps the file's `oracle_source`.

use seedledger_format::OracleSource;
use std::path::Path;
use std::process::{Command, Stdio};

/// `Some(true)`: tracked and unchanged against `HEAD`; `Some(false)`: untracked or changed;
/// `None`: git could not tell.
pub(crate) fn spec_committed(root: &Path, rel_path: &Path) -> Option<bool> {
    let dir = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let git = |args: &[&str]| {
        Command::new("git")
            .args(args)
            .arg("--")
            .arg(rel_path)
            .current_dir(dir)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .status()
            .ok()
            .and_then(|s| s.code())
    };
    match git(&["ls-files", "--error-unmatch"])? {
        0 => {}
        1 => return Some(false),
        _ => return None, // not a repository, or git failed
    }
    match git(&["diff", "--quiet", "HEAD"])? {
        0 => Some(true),
        1 => Some(false),
        _ => None,
    }
}

/// The oracle source a receipt may claim for a spec in that state.
pub(crate) fn effective_oracle(declared: OracleSource, committed: Option<bool>) -> OracleSource {
    match committed {
        Some(false) => OracleSource::ModelDraft,
        _ => declared,
    }
}
