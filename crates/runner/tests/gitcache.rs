//! The cache of git's answers (the runner's `gitcache.rs`; book: Running, "Code identity"):
//! against real git in temporary repositories, a kept answer is the one git gives, every
//! change git would see makes the cache ask git again, and a second `check` in an unchanged
//! repository starts no git process at all.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_format::sha256_hex;
use seedledger_runner::engine::code_identity;
use seedledger_runner::{Fixture, PropResult, Property, TestCase, int, prop_assert, try_check_in};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

/// Longer than the cache's racy-clean margin (2 s): files older than this may be kept.
const SETTLE: Duration = Duration::from_millis(2300);

/// `git ARGS` in `dir` as a test's author, which must succeed: what it printed, trimmed.
fn git(dir: &Path, args: &[&str]) -> String {
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
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_string()
}

/// The code identity (without a base) as git gives it, command by command (the runner's
/// `code.rs` module docs): the last commit outside the freeze store, `+dirty:` the digest of
/// the diff.
fn git_says(root: &Path) -> String {
    let exclude = ":(exclude)props/freezes";
    let head = git(root, &["rev-list", "-1", "HEAD", "--", ".", exclude]);
    let diff = Command::new("git")
        .args([
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--binary",
            "--full-index",
            "--no-color",
            "HEAD",
            "--",
            ".",
            exclude,
        ])
        .current_dir(root)
        .output()
        .unwrap();
    assert!(diff.status.success());
    if diff.stdout.is_empty() {
        format!("commit:{head}")
    } else {
        format!("commit:{head}+dirty:{}", sha256_hex(&diff.stdout))
    }
}

/// The cache file of the work tree at `root`.
fn answers_file(root: &Path) -> PathBuf {
    PathBuf::from(git(root, &["rev-parse", "--absolute-git-dir"])).join("seedledger/git-answers")
}

/// Whether the cache holds `code` for the work tree at `root`.
fn kept(root: &Path, code: &str) -> bool {
    std::fs::read_to_string(answers_file(root)).is_ok_and(|t| t.contains(&format!("\"{code}\"")))
}

/// A repository at `dir`: two commits (`a.rs` changed by the second), a spec and a
/// citation in the freeze store, and a branch `other` at the first commit.
fn repository(dir: &Path) {
    std::fs::create_dir_all(dir.join("props/freezes")).unwrap();
    std::fs::create_dir_all(dir.join("sub")).unwrap();
    std::fs::write(dir.join("a.rs"), "fn a() {}\n").unwrap();
    std::fs::write(dir.join("b.rs"), "bbbb\n").unwrap();
    std::fs::write(dir.join("sub/s.rs"), "fn s() {}\n").unwrap();
    std::fs::write(dir.join("props/p.md"), "spec\n").unwrap();
    std::fs::write(dir.join("props/freezes/c.json"), "{}\n").unwrap();
    git(dir, &["init", "-q", "-b", "main"]);
    git(dir, &["add", "."]);
    git(dir, &["commit", "-q", "-m", "one"]);
    git(dir, &["branch", "other"]);
    std::fs::write(dir.join("a.rs"), "fn a() { 2; }\n").unwrap();
    git(dir, &["commit", "-q", "-am", "two"]);
}

/// The identity computed twice (the second time from the cache when the first kept it):
/// both git's answer. Returns it.
fn warm(root: &Path) -> String {
    let expected = git_says(root);
    let cold = code_identity(root, None).unwrap();
    assert_eq!(cold.code, expected, "{}", root.display());
    assert!(kept(root, &expected), "kept: {}", root.display());
    let hot = code_identity(root, None).unwrap();
    assert_eq!(hot.code, expected);
    assert_eq!((hot.base, hot.paths.len()), (None, 0));
    expected
}

/// A change to a repository whose identity the cache keeps, and whether git's answer then
/// differs from the kept one.
type Change = (&'static str, fn(&Path), bool);

/// Each change, in a repository of its own that is set up (`before`) and left to settle,
/// then warmed (the answer kept), changed, and asked again: git's new answer each time,
/// never the kept one.
fn every_change_is_seen(changes: &[Change], before: fn(&Path)) {
    let tmp = tempfile::tempdir().unwrap();
    let roots: Vec<PathBuf> = (0..changes.len())
        .map(|k| {
            let root = tmp.path().join(format!("r{k}"));
            repository(&root);
            before(&root);
            root
        })
        .collect();
    std::thread::sleep(SETTLE);
    for ((name, change, differs), root) in changes.iter().zip(&roots) {
        let old = warm(root);
        change(root);
        let now = code_identity(root, None).unwrap().code;
        assert_eq!(now, git_says(root), "{name}");
        assert_eq!(now != old, *differs, "{name}: {old} -> {now}");
    }
}

/// Sets `path`'s modification time to `to`.
fn set_mtime(path: &Path, to: std::time::SystemTime) {
    std::fs::File::options()
        .write(true)
        .open(path)
        .unwrap()
        .set_modified(to)
        .unwrap();
}

#[test]
fn every_change_to_a_clean_tree_is_seen() {
    let changes: [Change; 11] = [
        (
            "same size, mtime put back",
            |r| {
                let mtime = std::fs::metadata(r.join("b.rs"))
                    .unwrap()
                    .modified()
                    .unwrap();
                std::fs::write(r.join("b.rs"), "cccc\n").unwrap();
                set_mtime(&r.join("b.rs"), mtime);
            },
            true,
        ),
        (
            "a commit of an edit",
            |r| {
                std::fs::write(r.join("b.rs"), "committed\n").unwrap();
                git(r, &["commit", "-q", "-am", "e"]);
            },
            true,
        ),
        (
            "an empty commit (rev-list passes over it)",
            |r| git(r, &["commit", "-q", "--allow-empty", "-m", "e"]).truncate(0),
            false,
        ),
        (
            "reset --soft HEAD~",
            |r| git(r, &["reset", "-q", "--soft", "HEAD~"]).truncate(0),
            true,
        ),
        (
            "checkout other",
            |r| git(r, &["checkout", "-q", "other"]).truncate(0),
            true,
        ),
        (
            "pack-refs --all",
            |r| git(r, &["pack-refs", "--all"]).truncate(0),
            false,
        ),
        (
            "a new tracked file",
            |r| {
                std::fs::write(r.join("sub/new.rs"), "new\n").unwrap();
                git(r, &["add", "sub/new.rs"]);
            },
            true,
        ),
        (
            "a deleted tracked file",
            |r| std::fs::remove_file(r.join("sub/s.rs")).unwrap(),
            true,
        ),
        (
            "chmod +x",
            |r| {
                use std::os::unix::fs::PermissionsExt;
                let p = std::fs::Permissions::from_mode(0o755);
                std::fs::set_permissions(r.join("b.rs"), p).unwrap();
            },
            true,
        ),
        (
            "the freeze store",
            |r| std::fs::write(r.join("props/freezes/c.json"), "{\"x\":1}\n").unwrap(),
            false,
        ),
        (
            "detached HEAD on the first commit",
            |r| git(r, &["checkout", "-q", "--detach", "HEAD~"]).truncate(0),
            true,
        ),
    ];
    every_change_is_seen(&changes, |_| {});
}

#[test]
fn every_change_to_a_dirty_tree_is_seen() {
    let changes: [Change; 6] = [
        (
            "git add of the edit",
            |r| git(r, &["add", "a.rs"]).truncate(0),
            false,
        ),
        (
            "commit of the edit",
            |r| git(r, &["commit", "-q", "-am", "e"]).truncate(0),
            true,
        ),
        (
            "core.filemode false",
            |r| git(r, &["config", "core.filemode", "false"]).truncate(0),
            true,
        ),
        (
            "core.autocrlf true",
            |r| git(r, &["config", "core.autocrlf", "true"]).truncate(0),
            true,
        ),
        (
            "a new .gitattributes, untracked",
            |r| std::fs::write(r.join("sub/.gitattributes"), "*.rs -diff\n").unwrap(),
            true,
        ),
        (
            "a newer edit",
            |r| std::fs::write(r.join("sub/s.rs"), "fn s() { 3; }\n").unwrap(),
            true,
        ),
    ];
    // Dirty: `sub/s.rs` edited, `b.rs` executable and with CRLF line ends.
    every_change_is_seen(&changes, |r| {
        use std::os::unix::fs::PermissionsExt;
        std::fs::write(r.join("sub/s.rs"), "fn s() { 1; }\n").unwrap();
        std::fs::write(r.join("b.rs"), "bbbb\r\n").unwrap();
        let p = std::fs::Permissions::from_mode(0o755);
        std::fs::set_permissions(r.join("b.rs"), p).unwrap();
    });
}

/// A root below the top level, a second work tree (`git worktree add`) and a detached `HEAD`
/// are kept and answered as git answers them; a repository without commits has no identity
/// either time, and nothing is kept for it.
#[test]
fn subdirectories_worktrees_and_detached_heads_are_answered_as_git_answers() {
    let tmp = tempfile::tempdir().unwrap();
    let main = tmp.path().join("main");
    repository(&main);
    std::fs::write(main.join("sub/s.rs"), "fn s() { 1; }\n").unwrap();
    let wt = tmp.path().join("wt");
    git(
        &main,
        &[
            "worktree",
            "add",
            "-q",
            "-b",
            "w",
            wt.to_str().unwrap(),
            "HEAD~",
        ],
    );
    let detached = tmp.path().join("detached");
    repository(&detached);
    git(&detached, &["checkout", "-q", "--detach"]);
    let empty = tmp.path().join("empty");
    std::fs::create_dir_all(&empty).unwrap();
    git(&empty, &["init", "-q"]);
    std::fs::write(empty.join("x.rs"), "x\n").unwrap();
    git(&empty, &["add", "x.rs"]);
    std::thread::sleep(SETTLE);
    let sub = warm(&main.join("sub"));
    assert!(sub.contains("+dirty:"));
    let top = warm(&main);
    assert_ne!(sub, top, "the root's diff is its own");
    let in_wt = warm(&wt);
    assert!(answers_file(&wt).to_string_lossy().contains("worktrees"));
    assert_ne!(in_wt, top);
    warm(&detached);
    for _ in 0..2 {
        assert!(code_identity(&empty, None).is_err());
    }
    assert!(!answers_file(&empty).exists());
}

/// An answer from files changed less than 2 s before git was asked is not kept (git's racy
/// clean problem: a change within the clock's resolution would not show in their status).
#[test]
fn an_answer_about_files_changed_in_the_last_two_seconds_is_not_kept() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path();
    repository(root);
    let fresh = code_identity(root, None).unwrap().code;
    assert_eq!(fresh, git_says(root));
    assert!(!kept(root, &fresh));
    std::thread::sleep(SETTLE);
    warm(root);
    std::fs::write(root.join("b.rs"), "edited\n").unwrap();
    let edited = code_identity(root, None).unwrap().code;
    assert_eq!(edited, git_says(root));
    assert!(!kept(root, &edited));
}

/// What the statuses of tracked files alone would miss: a directory on the way to them
/// replaced by a symbolic link to it (the files' statuses are the same through it, but git
/// sees them deleted), and a `.gitattributes` new beside a path in `HEAD` that was removed
/// from the index (not tracked, yet diffed with the work tree's attributes). git's new answer
/// each time; nothing kept while the link is there, nor when the diff quotes a path.
#[test]
fn links_on_the_way_and_attributes_of_paths_only_in_head_are_seen() {
    let tmp = tempfile::tempdir().unwrap();
    let [linked, removed, quoted] = ["linked", "removed", "quoted"].map(|n| tmp.path().join(n));
    for root in [&linked, &removed, &quoted] {
        repository(root);
    }
    git(&removed, &["rm", "-q", "--cached", "sub/s.rs"]);
    std::fs::write(quoted.join("sub/\u{e9}t\u{e9}.rs"), "one\n").unwrap();
    git(&quoted, &["add", "sub"]);
    git(&quoted, &["commit", "-q", "-m", "quoted"]);
    std::fs::write(quoted.join("sub/\u{e9}t\u{e9}.rs"), "two\n").unwrap();
    std::thread::sleep(SETTLE);
    let old = [warm(&linked), warm(&removed)];
    std::fs::rename(linked.join("sub"), linked.join("sub2")).unwrap();
    std::os::unix::fs::symlink("sub2", linked.join("sub")).unwrap();
    std::fs::write(removed.join("sub/.gitattributes"), "s.rs -diff\n").unwrap();
    for (root, old) in [&linked, &removed].into_iter().zip(old) {
        let now = code_identity(root, None).unwrap().code;
        assert_eq!(now, git_says(root), "{}", root.display());
        assert_ne!(now, old, "{}", root.display());
    }
    let quoted_code = code_identity(&quoted, None).unwrap().code;
    assert_eq!(quoted_code, git_says(&quoted));
    assert!(!kept(&quoted, &quoted_code));
    std::thread::sleep(SETTLE);
    let now = code_identity(&linked, None).unwrap().code;
    assert_eq!(now, git_says(&linked));
    assert!(!kept(&linked, &now), "kept through a link");
    assert_eq!(code_identity(&linked, None).unwrap().code, now);
}

/// A git directory on another device than the work tree (here in `/dev/shm`, where that is
/// another file system; elsewhere there is nothing to check) is asked each time, never kept:
/// the racy-clean rule needs one clock for every ctime.
#[test]
fn a_git_directory_on_another_device_is_not_kept() {
    use std::os::unix::fs::MetadataExt;
    let tmp = tempfile::tempdir().unwrap();
    let dev = |p: &Path| std::fs::metadata(p).map(|m| m.dev()).ok();
    let shm = Path::new("/dev/shm");
    if dev(shm).is_none() || dev(shm) == dev(tmp.path()) {
        eprintln!("no other device at /dev/shm: nothing to check");
        return;
    }
    let away = tempfile::tempdir_in(shm).unwrap();
    let root = tmp.path().join("r");
    repository(&root);
    let gitdir = away.path().join("git");
    // Moved by copying (a rename does not cross devices).
    let copied = Command::new("cp")
        .arg("-a")
        .arg(root.join(".git"))
        .arg(&gitdir)
        .status()
        .unwrap();
    assert!(copied.success());
    std::fs::remove_dir_all(root.join(".git")).unwrap();
    std::fs::write(root.join(".git"), format!("gitdir: {}\n", gitdir.display())).unwrap();
    std::fs::write(root.join("b.rs"), "dirty\n").unwrap();
    std::thread::sleep(SETTLE);
    for _ in 0..2 {
        assert_eq!(code_identity(&root, None).unwrap().code, git_says(&root));
    }
    assert!(!answers_file(&root).exists());
}

/// A file git reads through a symbolic link (the repository's configuration, the branch's
/// loose ref) is not one the cache can vouch for: git is asked every time, and nothing is
/// kept. (The files are read with one `open` that follows no final link.)
#[test]
fn a_configuration_or_ref_read_through_a_link_is_not_kept() {
    let tmp = tempfile::tempdir().unwrap();
    for linked in ["config", "refs/heads/main"] {
        let root = tmp.path().join(linked.replace('/', "_"));
        repository(&root);
        let file = root.join(".git").join(linked);
        let target = tmp
            .path()
            .join(format!("{}.target", linked.replace('/', "_")));
        std::fs::rename(&file, &target).unwrap();
        std::os::unix::fs::symlink(&target, &file).unwrap();
        std::fs::write(root.join("b.rs"), "dirty\n").unwrap();
        std::thread::sleep(SETTLE);
        for _ in 0..2 {
            assert_eq!(
                code_identity(&root, None).unwrap().code,
                git_says(&root),
                "{linked}"
            );
        }
        assert!(!answers_file(&root).exists(), "{linked}: nothing kept");
    }
}

/// Only a missing loose ref sends git to `packed-refs`: with the branch `a/b` packed and its
/// identity kept, a file `refs/heads/a` made afterwards (which changes no status the kept
/// answer names) makes git fail to resolve `HEAD`, and the identity fails too, every time,
/// instead of being answered from `packed-refs`.
#[test]
fn a_loose_ref_that_cannot_be_read_is_not_looked_up_in_packed_refs() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    repository(&root);
    git(&root, &["checkout", "-q", "-b", "a/b"]);
    git(&root, &["pack-refs", "--all"]);
    assert!(!root.join(".git/refs/heads/a/b").exists());
    std::thread::sleep(SETTLE);
    warm(&root);
    // (pack-refs removed the emptied directory `a` too, or it is empty.)
    let _ = std::fs::remove_dir(root.join(".git/refs/heads/a"));
    std::fs::write(root.join(".git/refs/heads/a"), "not a directory\n").unwrap();
    let git_fails = Command::new("git")
        .args(["rev-parse", "--verify", "-q", "HEAD"])
        .current_dir(&root)
        .stdout(Stdio::null())
        .status()
        .unwrap();
    assert!(!git_fails.success(), "git resolves HEAD through a file");
    for _ in 0..2 {
        assert!(code_identity(&root, None).is_err());
    }
}

/// A cache file that is garbage, or a symbolic link (here to a forged answer), is ignored:
/// git is asked, and the file is replaced by a plain one.
#[test]
fn a_garbage_or_linked_cache_file_is_ignored() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("r");
    repository(&root);
    std::thread::sleep(SETTLE);
    let code = warm(&root);
    let file = answers_file(&root);
    let good = std::fs::read_to_string(&file).unwrap();
    for garbage in ["", "{", "\u{0}\u{1}not json", &good[..good.len() / 2]] {
        std::fs::write(&file, garbage).unwrap();
        assert_eq!(code_identity(&root, None).unwrap().code, code);
        assert!(kept(&root, &code), "written again");
    }
    let forged_code = format!("commit:{}", "0".repeat(40));
    let forged = tmp.path().join("forged");
    std::fs::write(&forged, good.replace(&code, &forged_code)).unwrap();
    std::fs::remove_file(&file).unwrap();
    std::os::unix::fs::symlink(&forged, &file).unwrap();
    assert_eq!(code_identity(&root, None).unwrap().code, code);
    assert!(!std::fs::symlink_metadata(&file).unwrap().is_symlink());
    // Another version of the file is ignored too.
    std::fs::write(
        &file,
        good.replace(&code, &forged_code)
            .replace("\"version\":2", "\"version\":3"),
    )
    .unwrap();
    assert_eq!(code_identity(&root, None).unwrap().code, code);
}

/// The property `check` runs in the child process ([`child_process_entry`]).
fn gc_prop(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let n = tc.draw(&int(0..=20u8));
    prop_assert!(n <= 20);
    Ok(())
}

/// Not a test of its own: the child process of
/// [`a_second_check_in_an_unchanged_repository_starts_no_git`], which runs `check`'s library
/// path in the workspace `$GITCACHE_CHILD_ROOT` (and does nothing without it).
#[test]
fn child_process_entry() {
    if let Some(root) = std::env::var_os("GITCACHE_CHILD_ROOT") {
        try_check_in(&Property::new("gc_prop", gc_prop), Path::new(&root)).unwrap();
    }
}

/// `check` in a child process whose `PATH` starts with a `git` that logs its arguments and
/// runs the real git: the receipt's `code` and `spec_committed`, and what git was asked.
fn check_logging_git(root: &Path, bin: &Path, extra: &[(&str, &str)]) -> (String, bool, String) {
    let log = bin.join("log");
    let _ = std::fs::remove_file(&log);
    let path = format!("{}:{}", bin.display(), std::env::var("PATH").unwrap());
    let out = Command::new(std::env::current_exe().unwrap())
        .args(["child_process_entry", "--exact", "--test-threads=1"])
        .env("GITCACHE_CHILD_ROOT", root)
        .env("SEEDLEDGER_CASES", "10")
        .env("PATH", path)
        .envs(extra.iter().copied())
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(root.join("target/seedledger/local/gc_prop.receipt.json"))
            .unwrap(),
    )
    .unwrap();
    let asked = std::fs::read_to_string(&log).unwrap_or_default();
    (
        receipt["code"].as_str().unwrap().to_string(),
        receipt["spec_committed"].as_bool().unwrap(),
        asked,
    )
}

/// Through `check`: the first run asks git and keeps its answers; the second, in the same
/// unchanged repository, starts no git process and records the same `code` and
/// `spec_committed`; after an edit git is asked again; `SEEDLEDGER_GIT_CACHE=0` always asks.
#[test]
fn a_second_check_in_an_unchanged_repository_starts_no_git() {
    let tmp = tempfile::tempdir().unwrap();
    let root = tmp.path().join("ws");
    repository(&root);
    std::fs::write(
        root.join("props/gc_prop.md"),
        "---\nproperty_id: gc_prop\nbound: n <= 20\nfixture: none\noracle_source: human_reviewed\n---\nAlways.\n",
    )
    .unwrap();
    std::fs::write(root.join(".gitignore"), "target/\n").unwrap();
    git(&root, &["add", "."]);
    git(&root, &["commit", "-q", "-m", "spec"]);
    let bin = tmp.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let real = String::from_utf8(
        Command::new("sh")
            .args(["-c", "command -v git"])
            .output()
            .unwrap()
            .stdout,
    )
    .unwrap();
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            bin.join("log").display(),
            real.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
    std::thread::sleep(SETTLE);

    let (code, committed, asked) = check_logging_git(&root, &bin, &[]);
    assert_eq!(code, git_says(&root));
    assert!(committed);
    assert!(
        asked.contains("rev-list") && asked.contains("cat-file"),
        "{asked}"
    );
    let (again, committed_again, asked) = check_logging_git(&root, &bin, &[]);
    assert_eq!((again.as_str(), committed_again), (code.as_str(), true));
    assert_eq!(asked, "", "no git process the second time");
    let (off, _, asked) = check_logging_git(&root, &bin, &[("SEEDLEDGER_GIT_CACHE", "0")]);
    assert_eq!(off, code);
    assert!(asked.contains("rev-list"), "{asked}");
    // A `GIT_*` variable that may change what git does: git is asked.
    let (moved, _, asked) = check_logging_git(&root, &bin, &[("GIT_CONFIG_NOSYSTEM", "1")]);
    assert_eq!(moved, code);
    assert!(asked.contains("rev-list"), "{asked}");
    std::fs::write(root.join("a.rs"), "fn a() { 9; }\n").unwrap();
    let (edited, committed, asked) = check_logging_git(&root, &bin, &[]);
    assert_eq!(edited, git_says(&root));
    assert_ne!(edited, code);
    assert!(committed);
    assert!(asked.contains("diff"), "{asked}");
    // The index and HEAD as before: the tracked files and HEAD are known, only the identity's
    // own two commands run.
    assert!(
        !asked.contains("ls-files") && !asked.contains("--show-toplevel"),
        "{asked}"
    );
    // The spec edited: a draft, as git says (its committed blob's digest is kept by `HEAD`).
    let spec = root.join("props/gc_prop.md");
    let text = std::fs::read_to_string(&spec).unwrap();
    std::fs::write(&spec, text.replace("Always.", "Always!")).unwrap();
    let (_, committed, _) = check_logging_git(&root, &bin, &[]);
    assert!(!committed);
}
