//! Is a spec file committed? SPEC: "a draft that is not committed under `props/` is not a
//! spec". The runner compares the exact bytes it digested with the blob `HEAD` holds for the
//! path. Unless they are identical, the spec is a draft whatever its front matter says: the
//! receipt records `oracle_source: model_draft` and `spec_committed: false`. That includes a
//! repository without commits, a path not in `HEAD`, and any git error inside a repository
//! (for example git refusing a repository owned by another user): failing closed. Only when
//! the root is not inside a git work tree at all, or git is not installed, does the receipt
//! omit `spec_committed` and keep the file's `oracle_source`. Git is asked with the
//! environment the process started with (`anchor.rs`): a trial that sets `GIT_DIR` changes
//! nothing a later run records.

use crate::gitcache::{Pending, Repo};
use seedledger_format::{OracleSource, sha256_hex};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Child, Output, Stdio};
use std::sync::Mutex;

/// Whether a spec file is committed unchanged, and if not, why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SpecState {
    /// `Some(true)`: `HEAD` holds exactly the bytes; `Some(false)`: it does not, or git
    /// failed inside a repository; `None`: not a git work tree, or no git.
    pub committed: Option<bool>,
    /// For `Some(false)` (and for `None`): what git said, for the receipt and the summary.
    pub why: Option<String>,
}

/// The git processes [`prefetch`] started, by directory and spec path, until
/// [`spec_committed`] takes their answer.
static STARTED: Mutex<Vec<Started>> = Mutex::new(Vec::new());

/// A question [`prefetch`] asked: its directory, spec path, process, and what the cache
/// needs to keep the answer (`gitcache.rs`), when it may.
type Started = (PathBuf, PathBuf, Child, Option<Pending>);

/// At most this many questions are asked ahead at once.
const MAX_STARTED: usize = 8;

/// The answers [`prefetch`] found kept (`gitcache.rs`), by directory and spec path, until
/// [`spec_committed`] takes them: the same run's two looks at the kept answers (its
/// prefetch, then its question) validate them once, as a started git process answers once.
static KEPT: Mutex<Vec<Kept>> = Mutex::new(Vec::new());

/// A kept answer [`prefetch`] found: its directory, spec path, and `HEAD`'s blob digest there
/// (`None`: `HEAD` has no such path).
type Kept = (PathBuf, PathBuf, Option<String>);

/// Starts the git processes that [`spec_committed`] will ask first (`HEAD`'s blob at each
/// of `rel_paths`), so that they run beside the run's other start-up work (the code
/// identity's git processes, reading the spec) instead of after it; with `start_git: false`
/// only the kept answers are looked at. The kept answers are read once for all of them, and
/// that reading of the repository is returned, for the same run's code identity to use at
/// once (`code.rs`: [`crate::code::start_code_identity_read`]) instead of reading it again.
/// Nothing is started outside a repository, nor when [`MAX_STARTED`] answers are waiting
/// already, nor for a path whose answer is waiting already (then nothing is read). The
/// answer is still compared with the bytes the run digests, whenever they were read.
pub(crate) fn prefetch(root: &Path, rel_paths: &[PathBuf], start_git: bool) -> Option<Repo> {
    let dir = if root.as_os_str().is_empty() {
        Path::new(".")
    } else {
        root
    };
    let mut started = STARTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let asked: Vec<&PathBuf> = {
        let kept = KEPT
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner);
        let waiting = |rel: &Path| {
            started.iter().any(|(d, r, _, _)| d == dir && r == rel)
                || kept.iter().any(|(d, r, _)| d == dir && r == rel)
        };
        rel_paths.iter().filter(|rel| !waiting(rel)).collect()
    };
    if asked.is_empty() || started.len() >= MAX_STARTED {
        return None;
    }
    // (The directory resolved once, for both readings.)
    let resolved = dir.canonicalize().ok();
    if surely_outside_resolved(resolved.as_deref(), git_environment()) {
        return None;
    }
    // (The kept answers' lock is not held while the repository is read and git starts: a
    // run asking for its own kept answer meanwhile does not wait for them.)
    let cache = resolved.and_then(Repo::open_resolved);
    let mut found = Vec::new();
    for rel_path in asked {
        let Some(rel) = rel_path.to_str() else {
            continue;
        };
        // The cache answers: nothing to start; the answer waits for `spec_committed`.
        if let Some(blob) = cache.as_ref().and_then(|c| c.spec(rel)) {
            found.push((dir.to_path_buf(), rel_path.clone(), blob));
            continue;
        }
        if !start_git || started.len() >= MAX_STARTED {
            continue;
        }
        let pending = cache.clone().and_then(Repo::begin);
        let child = crate::anchor::git_command(dir)
            .args(["cat-file", "blob", &format!("HEAD:./{rel}")])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn();
        if let Ok(child) = child {
            started.push((dir.to_path_buf(), rel_path.clone(), child, pending));
        }
    }
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let room = MAX_STARTED.saturating_sub(kept.len());
    kept.extend(found.into_iter().take(room));
    cache
}

/// The path of `property_id`'s spec file in its workspace (`props/<id>.md`, as `load_spec`
/// names it).
fn spec_rel(property_id: &str) -> PathBuf {
    Path::new("props").join(format!("{property_id}.md"))
}

/// [`prefetch`] of the spec file of `property_id` in the workspace at `root`: for a caller
/// that knows which property runs next before it computes the code identity (`check`,
/// `prop run`'s worker).
pub fn prefetch_spec(root: &Path, property_id: &str) {
    prefetch_specs(root, &[property_id]);
}

/// [`prefetch_spec`] of several properties' specs, the kept answers read once for all.
pub fn prefetch_specs(root: &Path, property_ids: &[&str]) {
    let _ = prefetch(root, &spec_rels(property_ids), true);
}

/// The spec paths of `property_ids`.
pub(crate) fn spec_rels(property_ids: &[&str]) -> Vec<PathBuf> {
    property_ids.iter().map(|id| spec_rel(id)).collect()
}

/// Drops every kept spec answer waiting in this process: for `prop run`'s supervisor once it
/// has started its run process (a forked one holds its own copy of what
/// [`crate::code::start_code_identity_with_kept_specs`] found), so that nothing this process
/// asks later is answered as the repository was then.
pub fn forget_kept_specs() {
    KEPT.lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
        .clear();
}

/// The git process [`prefetch`] started for `rel_path` in `dir`, if any (taken).
fn prefetched(dir: &Path, rel_path: &Path) -> Option<(Child, Option<Pending>)> {
    let mut started = STARTED
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let at = started
        .iter()
        .position(|(d, r, _, _)| d == dir && r == rel_path)?;
    let (_, _, child, pending) = started.swap_remove(at);
    Some((child, pending))
}

/// The kept answer [`prefetch`] found for `rel_path` in `dir`, if any (taken).
fn kept_answer(dir: &Path, rel_path: &Path) -> Option<Option<String>> {
    let mut kept = KEPT
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner);
    let at = kept
        .iter()
        .position(|(d, r, _)| d == dir && r == rel_path)?;
    Some(kept.swap_remove(at).2)
}

/// Whether git, started in `dir`, is certain to find no repository (see
/// [`surely_outside_git`]): then there is nothing to ask it.
pub(crate) fn outside_git(dir: &Path) -> bool {
    surely_outside_git(dir, git_environment())
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
    let git = |args: &[&str], input: Option<&[u8]>| run_git(dir, args, input);
    // git's answer kept from an earlier run, when the repository is as it was then (see
    // `gitcache.rs`): the digest of `HEAD`'s blob at the path, or that it has none. Found
    // already by this run's `prefetch` (which looked for a repository first), or looked up
    // below.
    let kept = kept_answer(dir, rel_path);
    // Outside any repository (no `.git` or git directory on the way up), git can only say
    // so: told without starting it (a process start is most of a short run's fixed cost).
    let resolved = kept.is_none().then(|| dir.canonicalize().ok()).flatten();
    if kept.is_none() && surely_outside_resolved(resolved.as_deref(), git_environment()) {
        return state(None, "not inside a git work tree");
    }
    let cache = resolved.and_then(Repo::open_resolved);
    if let Some(rel) = rel_path.to_str()
        && let Some(blob) = kept.or_else(|| cache.as_ref().and_then(|cache| cache.spec(rel)))
    {
        let why = match blob {
            Some(blob) if blob == sha256_hex(bytes) => return state(Some(true), ""),
            Some(_) => format!("{rel} differs from the committed one"),
            None => format!("{rel} is not in the HEAD commit"),
        };
        return state(Some(false), &why);
    }
    // The usual case in one git process (started ahead by `prefetch`, or now): `HEAD`'s blob
    // at the path, compared byte for byte with the bytes digested (the same bytes exactly
    // when the blob ids are the same).
    let mut pending = None;
    let head = |rel: &str| match prefetched(dir, rel_path) {
        Some((child, started)) => {
            pending = started;
            child
                .wait_with_output()
                .map_err(|e| format!("git did not finish: {e}"))
        }
        None => {
            pending = cache.and_then(Repo::begin);
            git(&["cat-file", "blob", &format!("HEAD:./{rel}")], None)
        }
    };
    if let Some(rel) = rel_path.to_str()
        && let Ok(head) = head(rel)
        && head.status.success()
    {
        if let Some(pending) = pending {
            pending.store_spec(rel, Some(sha256_hex(&head.stdout)));
        }
        return if head.stdout == bytes {
            state(Some(true), "")
        } else {
            state(
                Some(false),
                &format!("{rel} differs from the committed one"),
            )
        };
    }
    // Anything else (no such path, no commit, git failing): asked step by step, to say why.
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
            (None, Some(_)) => {
                // Not in `HEAD` (git said nothing else): kept, as a blob would be.
                if head.stderr.is_empty()
                    && let Some(pending) = pending
                {
                    pending.store_spec(rel, None);
                }
                state(Some(false), &format!("{rel} is not in the HEAD commit"))
            }
            (None, None) => state(Some(false), &format!("{rel} is not in the HEAD commit")),
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

/// `git ARGS` in `dir` (with the start's environment), `input` on its standard input: what it
/// said, or why it could not be run.
fn run_git(dir: &Path, args: &[&str], input: Option<&[u8]>) -> Result<Output, String> {
    let mut child = crate::anchor::git_command(dir)
        .args(args)
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
}

/// Variables (and prefixes of variables) of git's environment that name a repository or
/// change where or how git looks for one, or which git runs: `GIT_DIR` above all; the
/// others for good measure. Others (`GIT_SSL_CAINFO`, `GIT_AUTHOR_NAME`, ...) do not.
const DISCOVERY_VARIABLES: [&str; 8] = [
    "GIT_DIR",
    "GIT_WORK_TREE",
    "GIT_COMMON_DIR",
    "GIT_OBJECT_DIRECTORY",
    "GIT_CONFIG",
    "GIT_CEILING_DIRECTORIES",
    "GIT_DISCOVERY_ACROSS_FILESYSTEM",
    "GIT_EXEC_PATH",
];

/// Whether a variable of the environment may change where git finds a repository (see
/// [`DISCOVERY_VARIABLES`]; `GIT_CONFIG` covers `GIT_CONFIG_PARAMETERS`, `GIT_CONFIG_COUNT`,
/// ...).
fn git_environment() -> bool {
    crate::anchor::start_env()
        .iter()
        .any(|(name, _)| moves_discovery(name))
}

/// Whether the variable `name` is one of [`DISCOVERY_VARIABLES`].
fn moves_discovery(name: &std::ffi::OsStr) -> bool {
    let name = name.as_encoded_bytes();
    DISCOVERY_VARIABLES
        .iter()
        .any(|v| name.starts_with(v.as_bytes()))
}

/// True only when git, started in `dir`, is certain to find no repository: no variable that
/// may point it elsewhere (`git_env`, see [`git_environment`]) and, in `dir` and every
/// directory above it (the physical path, as git walks it), no `.git` entry and none of `HEAD`, `objects`, `refs` (a bare repository is a
/// directory holding all three). Git stops its search earlier at a file system boundary or a
/// ceiling directory, never later, so it finds nothing either. Anything uncertain (a name
/// that cannot be looked up, a path that cannot be resolved) is false: git is asked.
fn surely_outside_git(dir: &Path, git_env: bool) -> bool {
    !git_env && surely_outside_resolved(dir.canonicalize().ok().as_deref(), git_env)
}

/// [`surely_outside_git`] of a directory already resolved (`None`: it could not be).
fn surely_outside_resolved(dir: Option<&Path>, git_env: bool) -> bool {
    let Some(dir) = dir.filter(|_| !git_env) else {
        return false;
    };
    let mut probe = dir.to_path_buf();
    dir.ancestors().all(|d| {
        [".git", "HEAD", "objects", "refs"].iter().all(|name| {
            probe.clear();
            probe.push(d);
            probe.push(name);
            std::fs::symlink_metadata(&probe)
                .is_err_and(|e| e.kind() == std::io::ErrorKind::NotFound)
        })
    })
}

/// The oracle source a receipt may claim for a spec in that state.
pub(crate) fn effective_oracle(declared: OracleSource, committed: Option<bool>) -> OracleSource {
    match committed {
        Some(false) => OracleSource::ModelDraft,
        _ => declared,
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::process::Command;

    /// `git ARGS` in `dir` (as a test's author, never signing), which must succeed: what it
    /// printed, trimmed.
    pub(crate) fn git(dir: &Path, args: &[&str]) -> String {
        let out = Command::new("git")
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@example.invalid",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .current_dir(dir)
            .stdin(Stdio::null())
            .output()
            .unwrap();
        assert!(out.status.success(), "git {args:?}");
        String::from_utf8_lossy(&out.stdout).trim().to_string()
    }

    /// A workspace with `props/p.md` (`spec\n`) in a new repository, committed when `commit`.
    fn spec_repository(commit: bool) -> tempfile::TempDir {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path();
        std::fs::create_dir_all(root.join("props")).unwrap();
        std::fs::write(root.join("props/p.md"), "spec\n").unwrap();
        git(root, &["init", "-q"]);
        if commit {
            git(root, &["add", "props"]);
            git(root, &["commit", "-q", "-m", "spec"]);
        }
        tmp
    }

    /// Whether git itself finds a repository from `dir`.
    fn git_finds_a_repository(dir: &Path) -> bool {
        Command::new("git")
            .args(["rev-parse", "--git-dir"])
            .current_dir(dir)
            .output()
            .is_ok_and(|o| o.status.success())
    }

    #[test]
    fn outside_git_is_told_only_when_nothing_on_the_way_up_could_be_a_repository() {
        let tmp = tempfile::tempdir().unwrap();
        let plain = tmp.path().join("a/b");
        std::fs::create_dir_all(&plain).unwrap();
        // Never sure when git would find one (the temporary directory may be inside a
        // work tree on some machines: then neither can say "outside").
        if surely_outside_git(&plain, false) {
            assert!(!git_finds_a_repository(&plain));
        }
        // A variable that may point git elsewhere (`GIT_DIR`...): asked.
        assert!(!surely_outside_git(&plain, true));
        for name in [
            "GIT_DIR",
            "GIT_WORK_TREE",
            "GIT_CONFIG_PARAMETERS",
            "GIT_CONFIG_COUNT",
        ] {
            assert!(moves_discovery(std::ffi::OsStr::new(name)), "{name}");
        }
        for name in ["GIT_SSL_CAINFO", "GIT_AUTHOR_NAME", "HOME", "PATH"] {
            assert!(!moves_discovery(std::ffi::OsStr::new(name)), "{name}");
        }
        // A directory that does not exist cannot be resolved: asked.
        assert!(!surely_outside_git(&tmp.path().join("missing"), false));
        // A `.git` above (a directory, a file, even a dangling link) or a directory that could
        // be a bare repository: asked.
        for name in [".git", "HEAD", "objects", "refs"] {
            let entry = tmp.path().join("a").join(name);
            std::fs::write(&entry, "").unwrap();
            assert!(!surely_outside_git(&plain, false), "{name}");
            std::fs::remove_file(&entry).unwrap();
        }
        std::os::unix::fs::symlink(tmp.path().join("nowhere"), tmp.path().join("a/.git")).unwrap();
        assert!(!surely_outside_git(&plain, false));
        std::fs::remove_file(tmp.path().join("a/.git")).unwrap();
        git(&tmp.path().join("a"), &["init", "-q"]);
        assert!(!surely_outside_git(&plain, false));
        assert!(git_finds_a_repository(&plain));
    }

    #[test]
    fn committed_edited_and_absent_specs_are_told_apart_with_their_reasons() {
        let tmp = spec_repository(false);
        let root = tmp.path();
        let rel = Path::new("props/p.md");
        // A repository without a commit: the path is not in HEAD.
        let state = spec_committed(root, rel, b"spec\n");
        assert_eq!(state.committed, Some(false));
        assert_eq!(
            state.why.as_deref(),
            Some("props/p.md is not in the HEAD commit")
        );
        git(root, &["add", "props"]);
        git(root, &["commit", "-q", "-m", "spec"]);
        assert_eq!(
            spec_committed(root, rel, b"spec\n"),
            SpecState {
                committed: Some(true),
                why: None
            }
        );
        // Other bytes than HEAD's, one byte more or one byte different.
        for other in [&b"spec\n\n"[..], b"spee\n", b""] {
            let state = spec_committed(root, rel, other);
            assert_eq!(state.committed, Some(false));
            assert_eq!(
                state.why.as_deref(),
                Some("props/p.md differs from the committed one")
            );
        }
        // A path HEAD does not have.
        let state = spec_committed(root, Path::new("props/q.md"), b"spec\n");
        assert_eq!(state.committed, Some(false));
        assert_eq!(
            state.why.as_deref(),
            Some("props/q.md is not in the HEAD commit")
        );
    }

    /// An answer about a spec is kept once git has confirmed `HEAD` (a code identity was
    /// computed, `gitcache.rs`), for a path `HEAD` has and for one it has not; a kept answer
    /// is told as git told it, and after a commit git is asked again.
    #[test]
    fn a_kept_spec_answer_is_the_one_git_gives() {
        let tmp = spec_repository(true);
        let root = tmp.path();
        std::thread::sleep(std::time::Duration::from_millis(2300));
        let (rel, absent) = (Path::new("props/p.md"), Path::new("props/q.md"));
        assert_eq!(spec_committed(root, rel, b"spec\n").committed, Some(true));
        assert_eq!(Repo::open(root).unwrap().spec("props/p.md"), None);
        crate::code::code_identity(root, None).unwrap();
        let ask = || {
            [
                spec_committed(root, rel, b"spec\n"),
                spec_committed(root, rel, b"spee\n"),
                spec_committed(root, absent, b"spec\n"),
            ]
        };
        let asked = ask();
        let repo = Repo::open(root).unwrap();
        assert_eq!(repo.spec("props/p.md"), Some(Some(sha256_hex(b"spec\n"))));
        assert_eq!(repo.spec("props/q.md"), Some(None));
        assert_eq!(ask(), asked);
        assert_eq!(
            asked.map(|s| s.committed),
            [Some(true), Some(false), Some(false)]
        );
        std::fs::write(root.join("props/q.md"), "spec\n").unwrap();
        git(root, &["add", "props"]);
        git(root, &["commit", "-q", "-m", "q"]);
        assert_eq!(
            spec_committed(root, absent, b"spec\n").committed,
            Some(true)
        );
    }

    /// The reading of the repository a prefetch made serves the code identity the same run
    /// computes right after (git's answer, as a fresh reading gives it), and nothing keeps
    /// it for a later run: a commit after a prefetch is seen by the next code identity.
    #[test]
    fn a_prefetchs_reading_serves_its_own_runs_code_identity_and_no_later_one() {
        let tmp = spec_repository(true);
        let root = tmp.path();
        let rels = spec_rels(&["p"]);
        std::thread::sleep(std::time::Duration::from_millis(2300));
        // Kept: the identity and the spec's answer.
        let code = crate::code::code_identity(root, None).unwrap();
        assert_eq!(
            spec_committed(root, Path::new("props/p.md"), b"spec\n").committed,
            Some(true)
        );
        // The prefetch's reading is the repository as it is, and gives git's identity.
        let opened = prefetch(root, &rels, true).expect("a repository whose answers are kept");
        assert_eq!(Some(&opened), Repo::open(root).as_ref());
        let job = crate::code::start_code_identity_read(root, None, Some(opened));
        assert_eq!(job.finish().unwrap(), code);
        // The answer it found waits for the run (forgotten on demand); a second prefetch of
        // it reads nothing.
        assert!(prefetch(root, &rels, true).is_none(), "already waiting");
        forget_kept_specs();
        assert!(
            prefetch(root, &rels, true).is_some(),
            "forgotten, so read again"
        );
        assert_eq!(
            kept_answer(root, Path::new("props/p.md")),
            Some(Some(sha256_hex(b"spec\n")))
        );
        // A reading is never left for a later code identity: a commit after a prefetch is
        // seen by the next one, however the prefetch went.
        let _ = prefetch(root, &rels, true);
        std::fs::write(root.join("props/r.md"), "r\n").unwrap();
        git(root, &["add", "props"]);
        git(root, &["commit", "-q", "-m", "r"]);
        let after = crate::code::code_identity(root, None).unwrap();
        assert_ne!(after, code);
        assert!(
            after.code.starts_with(&format!(
                "commit:{}",
                git(root, &["rev-parse", "HEAD"]).trim()
            )),
            "{after:?}"
        );
        let _ = kept_answer(root, Path::new("props/p.md"));
    }

    /// A question asked ahead (`prefetch_spec`) is answered as the question asked then: the
    /// answer is still compared with the bytes digested, it is taken once, and a question
    /// about another path or directory is not answered with it.
    #[test]
    fn a_prefetched_answer_is_the_answer_for_its_own_path_once() {
        let tmp = spec_repository(true);
        let root = tmp.path();
        let rel = Path::new("props/p.md");
        prefetch_spec(root, "p");
        assert!(prefetched(root, Path::new("props/q.md")).is_none());
        let edited = spec_committed(root, rel, b"spee\n");
        assert_eq!(edited.committed, Some(false));
        assert!(prefetched(root, rel).is_none(), "taken once");
        prefetch_spec(root, "p");
        assert_eq!(spec_committed(root, rel, b"spec\n").committed, Some(true));
        prefetch_spec(root, "q");
        let absent = spec_committed(root, Path::new("props/q.md"), b"spec\n");
        assert_eq!(
            absent.why.as_deref(),
            Some("props/q.md is not in the HEAD commit")
        );
    }
}
