//! The code identity a run records (SPEC: Per-patch counts and retirement; Witness row
//! extensions): what the patch under test *is*, so that evidence gathered on one version of
//! the code is never read as evidence about another.
//!
//! * With a base revision: `diff:<sha256 of "seedledger-code-v1\n" ++ BASE commit id ++ "\n"
//!   ++ git diff BASE>` plus the changed paths (the base is part of the identity: the same
//!   diff on another base is other code). Two
//!   machines with the same checkout of the same patch compute the same digest, so a local
//!   and a remote runner's rows agree; any change to the patch changes it.
//! * Without one: `commit:<HEAD>` — the last commit that changed anything outside the freeze
//!   store — with `+dirty:<sha256 of git diff HEAD>` appended when tracked files differ from
//!   `HEAD`.
//!
//! Git runs in the root with the environment the process started with (`anchor.rs`), not
//! one a trial may have changed since.
//!
//! The freeze store ([`FREEZE_STORE`]) is left out of both diffs: committing a citation must
//! not retire it. Untracked files are not part of a diff (git's rule); in CI everything is
//! committed. The base is resolved to a commit id once and recorded as such, so a moving
//! ref (`origin/main`) cannot change what a receipt says later.

use seedledger_format::sha256_hex;
use std::path::Path;

/// The freeze store's default place, relative to the workspace root; excluded from diffs.
pub const FREEZE_STORE: &str = "props/freezes";

/// What a run records about the code it ran.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CodeIdentity {
    /// `diff:<64 hex>` with a base, else `commit:<sha>[+dirty:<64 hex>]`.
    pub code: String,
    /// The base revision as a commit id, when there was one.
    pub base: Option<String>,
    /// The paths `git diff BASE` names (empty without a base).
    pub paths: Vec<String>,
}

/// Why the code identity could not be computed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CodeError {
    /// git could not be started.
    #[error("cannot run git in `{dir}`: {message}")]
    NoGit {
        /// The work tree's directory, as shown.
        dir: String,
        /// Why git could not be started.
        message: String,
    },
    /// The root is not inside a git work tree.
    #[error("`{dir}` is not inside a git work tree, so the code under test has no identity")]
    NotRepository {
        /// The directory, as shown.
        dir: String,
    },
    /// The base revision is not a commit this repository knows (a shallow clone, say).
    #[error(
        "base revision `{base}` is not a commit git knows here ({message}); fetch it (CI: checkout with fetch-depth: 0)"
    )]
    BadBase {
        /// The base revision as given.
        base: String,
        /// What git said.
        message: String,
    },
    /// A git command failed.
    #[error("`git {args}` failed in `{dir}`: {message}")]
    Git {
        /// Its arguments.
        args: String,
        /// The directory it ran in, as shown.
        dir: String,
        /// What git said.
        message: String,
    },
}

/// Computes the code identity of the work tree at `root`: against `base` when given, else
/// the `HEAD` commit (see the module docs).
pub fn code_identity(root: &Path, base: Option<&str>) -> Result<CodeIdentity, CodeError> {
    let dir = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let shown = dir.display().to_string();
    let git = |args: &[&str]| -> Result<Vec<u8>, CodeError> {
        let out = crate::anchor::git_command(dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .output()
            .map_err(|e| CodeError::NoGit {
                dir: shown.clone(),
                message: e.to_string(),
            })?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
            if message.contains("not a git repository") {
                return Err(CodeError::NotRepository { dir: shown.clone() });
            }
            Err(CodeError::Git {
                args: args.join(" "),
                dir: shown.clone(),
                message,
            })
        }
    };
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).trim().to_string();
    git(&["rev-parse", "--is-inside-work-tree"])?;
    let exclude = format!(":(exclude){FREEZE_STORE}");
    let diff = |rev: &str| {
        git(&[
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--binary",
            "--full-index",
            "--no-color",
            rev,
            "--",
            ".",
            &exclude,
        ])
    };
    match base {
        Some(base) => {
            let spec = format!("{base}^{{commit}}");
            let resolved = git(&["rev-parse", "--verify", "--quiet", &spec]).map_err(|e| {
                CodeError::BadBase {
                    base: base.to_string(),
                    message: match e {
                        CodeError::Git { message, .. } if !message.is_empty() => message,
                        CodeError::Git { .. } => "unknown revision".to_string(),
                        other => other.to_string(),
                    },
                }
            })?;
            let resolved = text(resolved);
            // The base is part of what the identity names: the same diff on another base is
            // other code (a rebase changes it even when the patch's own lines do not).
            let mut named = format!("seedledger-code-v1\n{resolved}\n").into_bytes();
            named.extend_from_slice(&diff(&resolved)?);
            let digest = sha256_hex(&named);
            let names = git(&[
                "diff",
                "--no-ext-diff",
                "--name-only",
                "-z",
                &resolved,
                "--",
                ".",
                &exclude,
            ])?;
            let paths = names
                .split(|&b| b == 0)
                .filter(|p| !p.is_empty())
                .map(|p| String::from_utf8_lossy(p).into_owned())
                .collect();
            Ok(CodeIdentity {
                code: format!("diff:{digest}"),
                base: Some(resolved),
                paths,
            })
        }
        None => {
            // The HEAD commit of the code: the last commit that changed anything outside the
            // freeze store, so that committing a citation does not retire it.
            let head = text(git(&["rev-list", "-1", "HEAD", "--", ".", &exclude])?);
            let head = if head.is_empty() {
                text(git(&["rev-parse", "--verify", "HEAD"])?)
            } else {
                head
            };
            let changes = diff("HEAD")?;
            let code = if changes.is_empty() {
                format!("commit:{head}")
            } else {
                format!("commit:{head}+dirty:{}", sha256_hex(&changes))
            };
            Ok(CodeIdentity {
                code,
                base: None,
                paths: Vec::new(),
            })
        }
    }
}
