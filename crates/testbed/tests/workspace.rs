//! Adoption, end to end, with real `cargo`:
//!
//! * a fresh workspace in a temporary directory takes seedledger by path with exactly the
//!   files README "Use seedledger in your workspace" shows (read from the README itself), adds
//!   one property with the documented steps (`prop new`, paste the printed function), and
//!   gets a receipt from `cargo xtask prop run` and a failing `cargo test` whose replay
//!   command reproduces the planted bug;
//! * a copy of this repository registers a deliberately failing suite in its `xtask`: `prop
//!   run` fails on it, and `cargo test` of the framework still passes.
//!
//! Both build with the real toolchain, offline (this repository's `Cargo.lock`, whose crates
//! the outer build has fetched), into one shared target directory under this repository's
//! `target/`, one at a time. A copy running its own tests skips these
//! (`SEEDLEDGER_NESTED`), so they never recurse.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::Mutex;

/// One cargo build at a time in the shared target directory.
static CARGO: Mutex<()> = Mutex::new(());

fn repo() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .unwrap()
}

fn nested() -> bool {
    std::env::var_os("SEEDLEDGER_NESTED").is_some()
}

struct Out {
    code: i32,
    stdout: String,
    stderr: String,
}

impl Out {
    fn both(&self) -> String {
        format!("{}\n{}", self.stdout, self.stderr)
    }
}

/// `cargo ARGS` in `dir`, offline, into the shared target directory, with nothing of the
/// caller's seedledger or demonstration environment.
fn cargo(dir: &Path, args: &[&str]) -> Out {
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let mut cmd = Command::new(cargo);
    cmd.args(args)
        .current_dir(dir)
        .env("CARGO_TARGET_DIR", repo().join("target/adoption"))
        .env("CARGO_NET_OFFLINE", "true")
        .env("SEEDLEDGER_NESTED", "1")
        .env_remove("CARGO_MANIFEST_DIR")
        .env_remove("RUSTC_WRAPPER");
    for (key, _) in std::env::vars_os() {
        let key = key.to_string_lossy().into_owned();
        if key.starts_with("SEEDLEDGER_") && key != "SEEDLEDGER_NESTED"
            || key.starts_with("ORDERS_")
            || key.starts_with("GITHUB_")
        {
            cmd.env_remove(&key);
        }
    }
    let out = cmd.output().unwrap();
    Out {
        code: out.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&out.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, text).unwrap();
}

/// The fenced blocks of README "Use seedledger in your workspace" that a paragraph names a
/// file for: (the first backticked path of the paragraph before the fence, the block).
fn readme_files() -> Vec<(String, String)> {
    let readme = std::fs::read_to_string(repo().join("README.md")).unwrap();
    let start = readme
        .find("\n## Use seedledger in your workspace\n")
        .expect("README has the section");
    let rest = &readme[start + 1..];
    let end = rest[3..].find("\n## ").map_or(rest.len(), |i| i + 3);
    let section = &rest[..end];
    let mut files = Vec::new();
    let mut paragraph = String::new();
    let mut last = String::new();
    let mut lines = section.lines();
    while let Some(line) = lines.next() {
        if line.starts_with("```") {
            let body: Vec<&str> = lines
                .by_ref()
                .take_while(|l| !l.starts_with("```"))
                .collect();
            if !paragraph.is_empty() {
                last = std::mem::take(&mut paragraph);
            }
            let path = last
                .split('`')
                .skip(1)
                .step_by(2)
                .find(|token| token.contains('/') && !token.contains(' '));
            if let Some(path) = path {
                files.push((path.to_string(), body.join("\n") + "\n"));
            }
            last.clear();
        } else if line.trim().is_empty() {
            if !paragraph.is_empty() {
                last = std::mem::take(&mut paragraph);
            }
        } else {
            paragraph.push_str(line);
            paragraph.push(' ');
        }
    }
    files
}

#[test]
fn a_fresh_workspace_adopts_seedledger_with_the_documented_steps() {
    if nested() {
        return;
    }
    let files = readme_files();
    let names: Vec<&str> = files.iter().map(|(p, _)| p.as_str()).collect();
    assert_eq!(
        names,
        [
            "my_crate/Cargo.toml",
            "xtask/Cargo.toml",
            "xtask/src/main.rs",
            ".cargo/config.toml"
        ],
        "the README section names these files"
    );
    // seedledger checked out beside the workspace, as README says: `TMP/seedledger` (a link
    // to this repository) and `TMP/ws`.
    let tmp = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(repo(), tmp.path().join("seedledger")).unwrap();
    let ws = &tmp.path().join("ws");
    // The user's workspace before adoption: one library crate, with a bug to find.
    write(
        &ws.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"my_crate\"]\n",
    );
    write(
        &ws.join("my_crate/Cargo.toml"),
        "[package]\nname = \"my_crate\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n",
    );
    write(
        &ws.join("my_crate/src/lib.rs"),
        "/// Clamps a percentage to 0..=100 (with a planted bug above 60).\npub fn clamp_percent(x: u32) -> u32 {\n    if x > 60 { 101 } else { x.min(100) }\n}\n",
    );
    // Offline: the crates this repository's lock file names are in the local cache.
    std::fs::copy(seedledger_lock(), ws.join("Cargo.lock")).unwrap();
    // Adoption: the README's files, byte for byte.
    for (path, body) in &files {
        let target = ws.join(path);
        if path == "my_crate/Cargo.toml" {
            let mut text = std::fs::read_to_string(&target).unwrap();
            text.push_str(body);
            write(&target, &text);
        } else {
            write(&target, body);
        }
    }
    write(
        &ws.join("Cargo.toml"),
        "[workspace]\nresolver = \"3\"\nmembers = [\"my_crate\", \"xtask\"]\n",
    );
    let _one_build = CARGO.lock().unwrap_or_else(|e| e.into_inner());

    // The documented steps for one property.
    std::fs::create_dir_all(ws.join("props")).unwrap();
    let new = cargo(ws, &["xtask", "prop", "new", "my_property"]);
    assert_eq!(new.code, 0, "{}", new.both());
    let spec = std::fs::read_to_string(ws.join("props/my_property.md")).unwrap();
    assert!(spec.contains("oracle_source: model_draft"), "{spec}");
    let start = new.stdout.find("use seedledger_runner").unwrap();
    let end = new.stdout[start..].find("\n\nThen:").unwrap() + start;
    let stub = &new.stdout[start..end];
    let predicate = "prop_assert!(x <= 100, \"x = {x}\");";
    assert!(stub.contains(predicate), "{stub}");
    let property = stub.replace(
        predicate,
        "prop_assert!(crate::clamp_percent(x) <= 100, \"x = {x}\");",
    );
    let lib = ws.join("my_crate/src/lib.rs");
    let mut text = std::fs::read_to_string(&lib).unwrap();
    text.push('\n');
    text.push_str(&property);
    text.push('\n');
    write(&lib, &text);

    let run = cargo(ws, &["xtask", "prop", "run"]);
    assert_eq!(run.code, 1, "{}", run.both());
    assert!(run.stdout.contains("FAIL my_property"), "{}", run.both());
    assert!(
        run.stdout
            .contains("replay: cargo xtask prop replay --property my_property --seed "),
        "{}",
        run.both()
    );
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(ws.join("target/seedledger/local/my_property.receipt.json"))
            .unwrap(),
    )
    .unwrap();
    assert_eq!(receipt["property_id"], "my_property");
    assert_eq!(receipt["oracle_source"], "model_draft");
    assert_eq!(receipt["stopped_early"], false);
    assert_eq!(receipt["shrink"]["minimal_input"], "61", "{receipt}");

    let test = cargo(ws, &["test", "-p", "my_crate"]);
    assert_ne!(test.code, 0, "{}", test.both());
    let output = test.both();
    let replay = output
        .lines()
        .find_map(|l| l.trim().strip_prefix("replay: cargo "))
        .unwrap_or_else(|| panic!("no replay command in:\n{output}"));
    assert!(
        replay.starts_with("xtask prop replay --property my_property --seed "),
        "{replay}"
    );
    let args: Vec<&str> = replay.split_whitespace().collect();
    let replayed = cargo(ws, &args);
    assert_eq!(replayed.code, 1, "{}", replayed.both());
    assert!(
        replayed
            .stdout
            .contains("result: FAIL [assert:crate::clamp_percent(x) <= 100]"),
        "{}",
        replayed.both()
    );
    assert!(
        replayed.stdout.contains("minimal input:  61"),
        "{}",
        replayed.both()
    );
}

fn seedledger_lock() -> PathBuf {
    repo().join("Cargo.lock")
}

/// The repository's files (tracked, and untracked ones not ignored), copied to `to`.
fn copy_repository(to: &Path) {
    let out = Command::new("git")
        .args([
            "ls-files",
            "-z",
            "--cached",
            "--others",
            "--exclude-standard",
        ])
        .current_dir(repo())
        .output()
        .unwrap();
    assert!(out.status.success(), "git ls-files in {}", repo().display());
    for name in out.stdout.split(|b| *b == 0).filter(|n| !n.is_empty()) {
        let name = std::str::from_utf8(name).unwrap();
        let from = repo().join(name);
        if from.is_file() {
            let target = to.join(name);
            std::fs::create_dir_all(target.parent().unwrap()).unwrap();
            std::fs::copy(&from, &target).unwrap();
        }
    }
}

#[test]
fn a_failing_suite_registered_in_xtask_cannot_fail_the_framework_s_tests() {
    if nested() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let copy = tmp.path();
    copy_repository(copy);
    // A user's suite with a property that fails on every seed, registered in xtask.
    write(
        &copy.join("crates/failing_suite/Cargo.toml"),
        "[package]\nname = \"failing_suite\"\nversion = \"0.1.0\"\nedition = \"2024\"\npublish = false\n\n[dependencies]\nseedledger-runner = { path = \"../runner\" }\n",
    );
    write(
        &copy.join("crates/failing_suite/src/lib.rs"),
        "use seedledger_runner::{Property, int, prop_assert, register};\n\nregister!(Property::new(\"always_fails\", |tc, _| {\n    let x = tc.draw(&int(0..=9u8));\n    prop_assert!(x > 9, \"x = {x}\");\n    Ok(())\n}));\n",
    );
    write(
        &copy.join("props/always_fails.md"),
        "---\nproperty_id: always_fails\nbound: never\nfixture: none\noracle_source: human_reviewed\n---\nFails on every seed, on purpose.\n",
    );
    let manifest = copy.join("Cargo.toml");
    let text = std::fs::read_to_string(&manifest).unwrap();
    let text = text.replacen(
        "members = [\n",
        "members = [\n    \"crates/failing_suite\",\n",
        1,
    );
    write(&manifest, &text);
    let xtask = copy.join("xtask/Cargo.toml");
    let mut text = std::fs::read_to_string(&xtask).unwrap();
    text = text.replace(
        "[dependencies]\n",
        "[dependencies]\nfailing_suite = { path = \"../crates/failing_suite\" }\n",
    );
    write(&xtask, &text);
    let main = copy.join("xtask/src/main.rs");
    let text = std::fs::read_to_string(&main).unwrap();
    let text = text.replacen(
        "use seedledger_orders as _;",
        "use failing_suite as _;\nuse seedledger_orders as _;",
        1,
    );
    assert!(text.contains("use failing_suite as _;"), "{text}");
    write(&main, &text);
    // And a data bug planted in the example suite's fixture: the example suite's own checks
    // fail on it, the framework's tests never read it.
    let fixture = copy.join("fixtures/order.json");
    let text = std::fs::read_to_string(&fixture).unwrap();
    assert!(text.contains("\"price_cents\": 899"), "{text}");
    write(
        &fixture,
        &text.replace("\"price_cents\": 899", "\"price_cents\": -899"),
    );
    let _one_build = CARGO.lock().unwrap_or_else(|e| e.into_inner());

    let run = cargo(
        copy,
        &["xtask", "prop", "run", "--property", "always_fails"],
    );
    assert_eq!(run.code, 1, "{}", run.both());
    assert!(run.stdout.contains("FAIL always_fails"), "{}", run.both());

    let test = cargo(
        copy,
        &[
            "test",
            "--workspace",
            "--exclude",
            "failing_suite",
            "--exclude",
            "seedledger-orders",
            "-j",
            "2",
        ],
    );
    assert_eq!(test.code, 0, "{}", test.both());
    assert!(!test.both().contains("FAILED"), "{}", test.both());
}
