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
//! one a trial may have changed since. Without a base, git's answer is kept between runs
//! (`gitcache.rs`) and given again, without starting git, only while everything it depends
//! on is as it was.
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
///
/// The git commands that do not need each other's answers run at once (a git process is
/// most of a short run's fixed cost): with a base, its two diffs once it is resolved; without
/// one, `rev-list` and `diff`. Outside any repository git is not started at all
/// ([`CodeError::NotRepository`], as git would say).
pub fn code_identity(root: &Path, base: Option<&str>) -> Result<CodeIdentity, CodeError> {
    start_code_identity(root, base).finish()
}

/// [`code_identity`] in two steps: the git processes are started now and run while the
/// caller does something else (`prop run`'s supervisor starts its run process meanwhile);
/// [`CodeIdentityJob::finish`] waits for them.
pub fn start_code_identity(root: &Path, base: Option<&str>) -> CodeIdentityJob {
    start_code_identity_read(root, base, None)
}

/// [`start_code_identity`] without a base, together with the kept answers about the specs of
/// `property_ids` (`props/<id>.md`), looked up in the same reading of the repository and left
/// waiting in this process for the runs that ask (without starting git for them): for `prop
/// run`'s supervisor before it forks its run process, which inherits those answers (and whose
/// own spec prefetch then finds them waiting).
pub fn start_code_identity_with_kept_specs(root: &Path, property_ids: &[&str]) -> CodeIdentityJob {
    let opened =
        crate::committed::prefetch(root, &crate::committed::spec_rels(property_ids), false);
    start_code_identity_read(root, None, opened)
}

/// [`start_code_identity`] with the repository as `opened`, read by the same run's spec
/// prefetch a moment ago (`committed.rs`), for the kept answers (see `gitcache.rs`); read now
/// when `None`. Never give it a reading older than the run: a commit since would not be seen.
pub(crate) fn start_code_identity_read(
    root: &Path,
    base: Option<&str>,
    opened: Option<crate::gitcache::Repo>,
) -> CodeIdentityJob {
    let dir = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let git = Git {
        dir: dir.to_path_buf(),
        shown: dir.display().to_string(),
    };
    // (A repository the prefetch read is one: nothing to look for.)
    let state = if opened.is_none() && crate::committed::outside_git(dir) {
        Job::Done(Err(CodeError::NotRepository {
            dir: git.shown.clone(),
        }))
    } else {
        match base {
            Some(base) => Job::Base {
                base: base.to_string(),
                resolve: git.spawn(&[
                    "rev-parse",
                    "--verify",
                    "--quiet",
                    &format!("{base}^{{commit}}"),
                ]),
            },
            None => head_job(&git, opened),
        }
    };
    CodeIdentityJob { git, state }
}

/// The job of an identity without a base: the cached answer when the cache has it (see
/// `gitcache.rs`; the repository as `opened`, read by the same run's spec prefetch a moment
/// ago, else read now), else `rev-list` and `diff` started, with `ls-files` and `rev-parse` beside
/// them when the answer may be kept.
fn head_job(git: &Git, opened: Option<crate::gitcache::Repo>) -> Job {
    let cache = opened.or_else(|| crate::gitcache::Repo::open(&git.dir));
    let known = match cache.as_ref().map(crate::gitcache::Repo::identity) {
        Some(Ok(code)) => {
            return Job::Done(Ok(CodeIdentity {
                code,
                base: None,
                paths: Vec::new(),
            }));
        }
        Some(Err(known)) => known,
        None => crate::gitcache::Known::default(),
    };
    // The present is noted before git starts (the cache's racy-clean rule).
    let pending = cache.and_then(crate::gitcache::Repo::begin);
    let exclude = exclude();
    let [rev_list, diff] = [
        git.spawn(&["rev-list", "-1", "HEAD", "--", ".", &exclude]),
        git.spawn(&diff_args("HEAD", &exclude)),
    ];
    // What the cache does not know yet is asked beside them: the tracked files (unless an
    // answer kept with the same index listed them) and git's reading of `HEAD` (unless
    // confirmed before).
    let keep = pending.map(|pending| {
        Box::new(Keep {
            pending,
            ls_files: known
                .paths
                .is_none()
                .then(|| git.spawn(&ls_files_args(&exclude))),
            rev_parse: (!known.verified).then(|| git.spawn(&REV_PARSE_ARGS)),
            known,
        })
    });
    Job::Head {
        rev_list,
        diff,
        keep,
    }
}

/// `git ls-files` of the tracked files the cache watches (those the diff covers).
fn ls_files_args(exclude: &str) -> [&str; 6] {
    ["ls-files", "-z", "--stage", "--", ".", exclude]
}

/// git's own reading of where the repository is and what `HEAD` is, to confirm the cache's.
const REV_PARSE_ARGS: [&str; 5] = [
    "rev-parse",
    "--absolute-git-dir",
    "--git-common-dir",
    "--show-toplevel",
    "HEAD",
];

/// The processes that tell the cache what to keep with an identity ([`head_job`]).
#[derive(Debug)]
struct Keep {
    pending: crate::gitcache::Pending,
    known: crate::gitcache::Known,
    ls_files: Option<Result<std::process::Child, CodeError>>,
    rev_parse: Option<Result<std::process::Child, CodeError>>,
}

impl Keep {
    /// Waits for its processes and keeps `code` (from the diff `diff`) when they answered.
    fn finish(self, git: &Git, answer: Option<(&str, &[u8])>) {
        let ls_files = self
            .ls_files
            .map(|c| git.finish_spawned(c, &ls_files_args(&exclude())));
        let rev_parse = self
            .rev_parse
            .map(|c| git.finish_spawned(c, &REV_PARSE_ARGS));
        let (Some(answer), Ok(ls_files), Ok(rev_parse)) =
            (answer, ls_files.transpose(), rev_parse.transpose())
        else {
            return;
        };
        self.pending.store_identity(
            (ls_files.as_deref(), rev_parse.as_deref()),
            self.known,
            answer,
        );
    }
}

/// A code identity being computed ([`start_code_identity`]). Its git processes are waited
/// for by [`CodeIdentityJob::finish`], or when it is dropped.
#[derive(Debug)]
pub struct CodeIdentityJob {
    git: Git,
    state: Job,
}

#[derive(Debug)]
enum Job {
    Done(Result<CodeIdentity, CodeError>),
    /// No base: `rev-list` and `diff` started.
    Head {
        rev_list: Result<std::process::Child, CodeError>,
        diff: Result<std::process::Child, CodeError>,
        /// What the cache needs to keep the answer, when it may.
        keep: Option<Box<Keep>>,
    },
    /// A base: its resolution to a commit started.
    Base {
        base: String,
        resolve: Result<std::process::Child, CodeError>,
    },
}

impl CodeIdentityJob {
    /// Waits for the git processes (starting those that needed an answer first) and makes
    /// the identity.
    pub fn finish(mut self) -> Result<CodeIdentity, CodeError> {
        let state = std::mem::replace(
            &mut self.state,
            Job::Done(Err(CodeError::NotRepository { dir: String::new() })),
        );
        let git = &self.git;
        let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).trim().to_string();
        let exclude = exclude();
        match state {
            Job::Done(result) => result,
            Job::Base { base, resolve } => {
                let spec = format!("{base}^{{commit}}");
                let resolve_args = ["rev-parse", "--verify", "--quiet", &spec];
                let resolved = git
                    .finish_spawned(resolve, &resolve_args)
                    .map_err(|e| match e {
                        CodeError::Git { message, .. } => CodeError::BadBase {
                            base: base.clone(),
                            message: if message.is_empty() {
                                "unknown revision".to_string()
                            } else {
                                message
                            },
                        },
                        other => other,
                    })?;
                let resolved = text(resolved);
                let names = [
                    "diff",
                    "--no-ext-diff",
                    "--name-only",
                    "-z",
                    &resolved,
                    "--",
                    ".",
                    &exclude,
                ];
                let diff_args = diff_args(&resolved, &exclude);
                let [diff, names] = git.together(
                    [git.spawn(&diff_args), git.spawn(&names)],
                    [&diff_args, &names],
                );
                let (diff, names) = (diff?, names?);
                // The base is part of what the identity names: the same diff on another base
                // is other code (a rebase changes it even when the patch's own lines do not).
                let mut named = format!("seedledger-code-v1\n{resolved}\n").into_bytes();
                named.extend_from_slice(&diff);
                let digest = sha256_hex(&named);
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
            Job::Head {
                rev_list,
                diff,
                keep,
            } => {
                let identity = head_identity(git, [rev_list, diff]);
                if let Some(keep) = keep {
                    let answer = identity.as_ref().ok();
                    keep.finish(git, answer.map(|(i, d)| (i.code.as_str(), d.as_slice())));
                }
                identity.map(|(identity, _)| identity)
            }
        }
    }
}

/// The identity without a base from its `rev-list` and `diff` processes, with the diff.
fn head_identity(
    git: &Git,
    [rev_list, diff]: [Result<std::process::Child, CodeError>; 2],
) -> Result<(CodeIdentity, Vec<u8>), CodeError> {
    let text = |bytes: Vec<u8>| String::from_utf8_lossy(&bytes).trim().to_string();
    let exclude = exclude();
    // The HEAD commit of the code: the last commit that changed anything outside the freeze
    // store, so that committing a citation does not retire it.
    let rev_list_args = ["rev-list", "-1", "HEAD", "--", ".", &exclude];
    let diff_head = diff_args("HEAD", &exclude);
    let [head, changes] = git.together([rev_list, diff], [&rev_list_args, &diff_head]);
    let head = text(head?);
    let changes = changes?;
    let head = if head.is_empty() {
        let args = ["rev-parse", "--verify", "HEAD"];
        text(git.finish_spawned(git.spawn(&args), &args)?)
    } else {
        head
    };
    let code = if changes.is_empty() {
        format!("commit:{head}")
    } else {
        format!("commit:{head}+dirty:{}", sha256_hex(&changes))
    };
    Ok((
        CodeIdentity {
            code,
            base: None,
            paths: Vec::new(),
        },
        changes,
    ))
}

impl Drop for CodeIdentityJob {
    fn drop(&mut self) {
        // Never finished: its processes are waited for, not left behind.
        let children = match &mut self.state {
            Job::Head {
                rev_list,
                diff,
                keep,
            } => {
                let mut children = vec![rev_list.as_mut().ok(), diff.as_mut().ok()];
                if let Some(keep) = keep {
                    for child in [&mut keep.ls_files, &mut keep.rev_parse]
                        .into_iter()
                        .flatten()
                    {
                        children.push(child.as_mut().ok());
                    }
                }
                children
            }
            Job::Base { resolve, .. } => vec![resolve.as_mut().ok()],
            Job::Done(_) => Vec::new(),
        };
        for child in children.into_iter().flatten() {
            let _ = child.wait();
        }
    }
}

/// The pathspec that leaves the freeze store out.
fn exclude() -> String {
    format!(":(exclude){FREEZE_STORE}")
}

/// `git diff` of the work tree against `rev`, as the identity digests it.
fn diff_args<'a>(rev: &'a str, exclude: &'a str) -> [&'a str; 10] {
    [
        "diff",
        "--no-ext-diff",
        "--no-textconv",
        "--binary",
        "--full-index",
        "--no-color",
        rev,
        "--",
        ".",
        exclude,
    ]
}

/// git in one directory, with the environment the process started with.
#[derive(Debug)]
struct Git {
    dir: std::path::PathBuf,
    /// The directory as errors show it.
    shown: String,
}

impl Git {
    fn spawn(&self, args: &[&str]) -> Result<std::process::Child, CodeError> {
        crate::anchor::git_command(&self.dir)
            .args(args)
            .stdin(std::process::Stdio::null())
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .map_err(|e| CodeError::NoGit {
                dir: self.shown.clone(),
                message: e.to_string(),
            })
    }

    /// What `child` (started with `args`) printed, or the error its failure is.
    fn finish(&self, child: std::process::Child, args: &[&str]) -> Result<Vec<u8>, CodeError> {
        let out = child.wait_with_output().map_err(|e| CodeError::NoGit {
            dir: self.shown.clone(),
            message: e.to_string(),
        })?;
        if out.status.success() {
            return Ok(out.stdout);
        }
        let message = String::from_utf8_lossy(&out.stderr).trim().to_string();
        if message.contains("not a git repository") {
            return Err(CodeError::NotRepository {
                dir: self.shown.clone(),
            });
        }
        Err(CodeError::Git {
            args: args.join(" "),
            dir: self.shown.clone(),
            message,
        })
    }

    /// [`Git::finish`] of a process [`Git::spawn`] may have failed to start.
    fn finish_spawned(
        &self,
        child: Result<std::process::Child, CodeError>,
        args: &[&str],
    ) -> Result<Vec<u8>, CodeError> {
        child.and_then(|child| self.finish(child, args))
    }

    /// Two processes started together, each waited for whatever the other did: their
    /// outputs or errors (`args` name them in errors). Outside a repository both fail; that
    /// is then the error of both, whichever said it.
    fn together(
        &self,
        [a, b]: [Result<std::process::Child, CodeError>; 2],
        [a_args, b_args]: [&[&str]; 2],
    ) -> [Result<Vec<u8>, CodeError>; 2] {
        let a = self.finish_spawned(a, a_args);
        let b = self.finish_spawned(b, b_args);
        if matches!(a, Err(CodeError::NotRepository { .. }))
            || matches!(b, Err(CodeError::NotRepository { .. }))
        {
            let not = || {
                Err(CodeError::NotRepository {
                    dir: self.shown.clone(),
                })
            };
            return [not(), not()];
        }
        [a, b]
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::committed::tests::git;
    use std::process::Command;

    /// The identity the commands give one at a time (the module docs), asked of git here
    /// command by command, is what `code_identity` computes with its commands at once: the
    /// last commit outside the freeze store, `+dirty` with the digest of the diff, and against
    /// a base the digest of base and diff with the changed paths.
    #[test]
    fn the_identity_is_the_one_git_gives_command_by_command() {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("props/freezes")).unwrap();
        std::fs::write(root.join("a.rs"), "fn a() {}\n").unwrap();
        git(root, &["init", "-q"]);
        git(root, &["add", "."]);
        git(root, &["commit", "-q", "-m", "a"]);
        let a = git(root, &["rev-parse", "HEAD"]);
        // A commit of the freeze store alone leaves the identity on `a`.
        std::fs::write(root.join("props/freezes/c.json"), "{}\n").unwrap();
        git(root, &["add", "."]);
        git(root, &["commit", "-q", "-m", "cite"]);
        let clean = code_identity(root, None).unwrap();
        assert_eq!(clean.code, format!("commit:{a}"));
        assert_eq!((clean.base, clean.paths.len()), (None, 0));
        std::fs::write(root.join("a.rs"), "fn a() { 1; }\n").unwrap();
        let diff = Command::new("git")
            .args(diff_args("HEAD", &exclude()))
            .current_dir(root)
            .output()
            .unwrap()
            .stdout;
        let dirty = code_identity(root, None).unwrap();
        assert_eq!(
            dirty.code,
            format!("commit:{a}+dirty:{}", sha256_hex(&diff))
        );
        let mut named = format!("seedledger-code-v1\n{a}\n").into_bytes();
        named.extend_from_slice(&diff);
        let based = code_identity(root, Some("HEAD~1")).unwrap();
        assert_eq!(based.code, format!("diff:{}", sha256_hex(&named)));
        assert_eq!(based.base.as_deref(), Some(a.as_str()));
        assert_eq!(based.paths, ["a.rs"]);
        assert!(matches!(
            code_identity(root, Some("no-such-rev")),
            Err(CodeError::BadBase { .. })
        ));
    }

    /// Outside any repository the answer is `NotRepository`, whether git is asked or not
    /// (a directory that may be inside one is asked).
    #[test]
    fn outside_a_repository_there_is_no_identity() {
        let tmp = tempfile::tempdir().unwrap();
        let dir = tmp.path().join("plain");
        std::fs::create_dir_all(&dir).unwrap();
        let inside_some_repository = Command::new("git")
            .args(["rev-parse", "--git-dir"])
            .current_dir(&dir)
            .output()
            .is_ok_and(|o| o.status.success());
        if !inside_some_repository {
            assert!(matches!(
                code_identity(&dir, None),
                Err(CodeError::NotRepository { .. })
            ));
            assert!(matches!(
                code_identity(&dir, Some("HEAD")),
                Err(CodeError::NotRepository { .. })
            ));
        }
    }
}
