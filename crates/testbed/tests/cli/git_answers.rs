//! `prop run` and git's kept answers (the runner's `gitcache.rs`): in a repository that has
//! not changed since the first run, a second `prop run` starts no git process — whether its
//! run process is forked from the supervisor (which looks the spec answers up for it with
//! its code identity) or exec'd (which looks them up itself) — and records the same code
//! identity and the same committed spec as the first.

use crate::support::{crash_command, crash_root, finish, read_json};
use std::path::Path;

/// `git` on `PATH` as a wrapper that logs its arguments to `log` and runs the real one.
fn logging_git(bin: &Path, log: &Path) {
    let real = std::process::Command::new("sh")
        .args(["-c", "command -v git"])
        .output()
        .unwrap()
        .stdout;
    let real = String::from_utf8(real).unwrap();
    let wrapper = bin.join("git");
    std::fs::write(
        &wrapper,
        format!(
            "#!/bin/sh\necho \"$*\" >> '{}'\nexec '{}' \"$@\"\n",
            log.display(),
            real.trim()
        ),
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&wrapper, std::fs::Permissions::from_mode(0o755)).unwrap();
}

fn git(dir: &Path, args: &[&str]) {
    let status = std::process::Command::new("git")
        .args(args)
        .current_dir(dir)
        .env("GIT_AUTHOR_NAME", "t")
        .env("GIT_AUTHOR_EMAIL", "t@t")
        .env("GIT_COMMITTER_NAME", "t")
        .env("GIT_COMMITTER_EMAIL", "t@t")
        .status()
        .unwrap();
    assert!(status.success(), "git {args:?}");
}

#[test]
fn a_second_prop_run_in_an_unchanged_repository_starts_no_git_forked_or_execd() {
    let dir = crash_root(&["passes"]);
    let root = dir.path();
    std::fs::write(root.join(".gitignore"), "target/\nbin/\n").unwrap();
    git(root, &["init", "-q"]);
    git(root, &["add", "."]);
    git(root, &["commit", "-q", "-m", "specs"]);
    let bin = root.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let log = root.join("bin/log");
    logging_git(&bin, &log);
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    // git's answers are kept only about files more than 2 s older than the question.
    std::thread::sleep(std::time::Duration::from_millis(2300));
    let receipt = root.join("target/seedledger/local/passes.receipt.json");
    let run = |exec: &str| {
        let _ = std::fs::remove_file(&log);
        let mut cmd = crash_command(
            root,
            &["prop", "run", "--property", "passes", "--cases", "20"],
        );
        cmd.env("PATH", &path).env("SEEDLEDGER_WORKER_EXEC", exec);
        let out = finish(cmd);
        assert_eq!(out.code, 0, "{}", out.stderr);
        let asked = std::fs::read_to_string(&log).unwrap_or_default();
        let r = read_json(&receipt);
        (r["code"].clone(), r["spec_committed"].clone(), asked)
    };
    let (code, committed, asked) = run("0");
    assert!(
        code.as_str().is_some_and(|c| c.starts_with("commit:")),
        "{code}"
    );
    assert_eq!(committed, serde_json::json!(true));
    assert!(
        asked.contains("rev-list"),
        "the first run asks git: {asked}"
    );
    for exec in ["0", "1"] {
        let (again, committed_again, asked) = run(exec);
        assert_eq!(
            (&again, &committed_again),
            (&code, &committed),
            "exec={exec}"
        );
        assert_eq!(asked, "", "exec={exec}: no git process the second time");
    }
}
