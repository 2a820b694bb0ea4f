//! Who may cite (SPEC: Who may cite), through the real binary and as an attacker would try it:
//! a citation edited in place, one written by hand, the same evidence cited twice, a patch
//! that ships its own citation, a loose trust or key file, a clock that cannot judge expiry,
//! and property ids outside the id rule.

use crate::freeze::{git, repository};
use crate::support::{Root, Run};
use serde_json::{Value, json};
use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

const PROPERTY: &str = "order_receipt_roundtrip";
const PLAN: &str = "1093..=1096";
const PATCH: &str = "pr-7";
const EXPIRY: &str = "2030-01-01T00:00:00Z";
/// Seed 1094 fails with a German locale and passes without it.
const LOCAL_ONLY: (&str, &str) = ("ORDERS_LOCALE", "de_DE");
const BUG: (&str, &str) = ("ORDERS_DEMO_BUG", "1");
const TRUST_FILE: &str = "props/trusted-runners.jsonl";
const STORE: &str = "props/freezes";

/// A repository with evidence of the environment-dependent failure of `PROPERTY` (a local
/// run, a remote replay), ready to cite; with `citer`, a trust file declaring a citer key
/// (committed in the base) and the key in a file of mode 600.
struct Cited {
    root: Root,
    base: String,
    key_file: Option<PathBuf>,
    /// The remote runner's secret key (with a trust file).
    remote_key: Option<String>,
}

impl Cited {
    fn new(citer: bool) -> Cited {
        Cited::with(citer, |_| {})
    }

    /// [`Cited::new`] with `edit` applied to the workspace (and committed) first.
    fn with(citer: bool, edit: impl FnOnce(&Path)) -> Cited {
        let (root, _) = repository();
        edit(root.path());
        git(root.path(), &["add", "."]);
        git(
            root.path(),
            &["commit", "-q", "--allow-empty", "-m", "edit"],
        );
        // With a trust file, remote rows count only when signed: the remote runner has a key.
        let remote_key = citer.then(|| {
            let out = root.run(&["keys", "generate", "--role", "remote", "--key-id", "ci"]);
            assert_eq!(out.code, 0, "{}", out.stderr);
            out.stdout.trim().to_string()
        });
        let key_file = citer.then(|| {
            let out = root.run(&["keys", "generate", "--role", "citer", "--key-id", "maint"]);
            assert_eq!(out.code, 0, "{}", out.stderr);
            let file = root.path().join("target/citer.key");
            std::fs::create_dir_all(file.parent().unwrap()).unwrap();
            std::fs::write(&file, &out.stdout).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
            git(root.path(), &["add", TRUST_FILE]);
            git(root.path(), &["commit", "-q", "-m", "trust a citer"]);
            file
        });
        let base = git(root.path(), &["rev-parse", "HEAD"]);
        let c = Cited {
            root,
            base,
            key_file,
            remote_key,
        };
        c.evidence();
        c
    }

    /// The local run (seed 1094 fails) into `local/`, its replay on the remote runner (signed
    /// where there is a trust file) into `remote/`, both at the work tree's code.
    fn evidence(&self) {
        for dir in ["local", "remote"] {
            let _ = std::fs::remove_dir_all(self.root.path().join(dir));
        }
        let c = self;
        let local = c.prop_run(PROPERTY, "local", &[LOCAL_ONLY]);
        assert_eq!(local.code, 1, "{}\n{}", local.stdout, local.stderr);
        let signing: Vec<(&str, &str)> = c
            .remote_key
            .iter()
            .map(|k| ("SEEDLEDGER_RUNNER_KEY", k.as_str()))
            .collect();
        let remote = c.run(
            &[
                "prop",
                "reproduce",
                "local",
                "--out",
                "remote",
                "--repeat",
                "1",
                "--base",
                &c.base,
            ],
            &signing,
        );
        assert_eq!(remote.code, 0, "{}\n{}", remote.stdout, remote.stderr);
    }

    fn run(&self, args: &[&str], env: &[(&str, &str)]) -> Run {
        self.root.run_env(args, env)
    }

    /// `gate cite` of the evidence, with the key file when there is one.
    fn cite(&self, expires_at: &str) -> Run {
        let witnesses = [
            format!("local/{PATCH}/{PROPERTY}.witness.jsonl"),
            format!("remote/{PATCH}/{PROPERTY}.witness.jsonl"),
        ];
        let receipt = format!("local/{PATCH}/{PROPERTY}.receipt.json");
        let mut args = vec!["gate", "cite", "--property", PROPERTY, "--witnesses"];
        args.extend(witnesses.iter().map(String::as_str));
        args.extend(["--receipts", &receipt, "--expires-at", expires_at]);
        let key = self.key_file.as_ref().map(|k| k.display().to_string());
        if let Some(key) = &key {
            args.extend(["--key-file", key]);
        }
        self.run(&args, &[])
    }

    /// The store's files, sorted.
    fn store(&self) -> Vec<PathBuf> {
        let Ok(entries) = std::fs::read_dir(self.root.path().join(STORE)) else {
            return Vec::new();
        };
        let mut files: Vec<PathBuf> = entries.map(|e| e.unwrap().path()).collect();
        files.sort();
        files
    }

    /// `gate freezes --format json`: the exit code and one object per file.
    fn freezes(&self, extra: &[&str]) -> (i32, Vec<Value>) {
        let mut args = vec!["gate", "freezes", "--format", "json"];
        args.extend(extra);
        let out = self.run(&args, &[]);
        let lines = out
            .stdout
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        (out.code, lines)
    }

    /// `prop run` of `PROPERTY` with the local-only failure, into `out`.
    fn next_run(&self, out: &str) -> Run {
        self.prop_run(PROPERTY, out, &[LOCAL_ONLY])
    }

    /// `prop run` of `property` over the plan as patch `pr-7` against the base, into `out`.
    fn prop_run(&self, property: &str, out: &str, env: &[(&str, &str)]) -> Run {
        self.run(
            &[
                "prop",
                "run",
                "--property",
                property,
                "--seeds",
                PLAN,
                "--patch-id",
                PATCH,
                "--base",
                &self.base,
                "--out",
                out,
            ],
            env,
        )
    }
}

fn name(path: &Path) -> String {
    path.file_name().unwrap().to_string_lossy().into_owned()
}

#[test]
fn a_citation_edited_in_place_is_invalid_and_never_honoured() {
    let c = Cited::new(true);
    let cited = c.cite(EXPIRY);
    assert_eq!(cited.code, 0, "{}\n{}", cited.stdout, cited.stderr);
    let files = c.store();
    assert_eq!(files.len(), 1);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let citation: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(citation["key_id"], "maint");
    assert_eq!(citation["sig"].as_str().map(str::len), Some(128));
    // Signed and honoured as written.
    let (code, listed) = c.freezes(&[]);
    assert_eq!(code, 0, "{listed:?}");
    assert_eq!(listed[0]["state"], "active");
    assert_eq!(listed[0]["authenticity"], "signed");
    assert_eq!(listed[0]["key_id"], "maint");
    let frozen = c.next_run("frozen");
    assert_eq!(frozen.code, 0, "{}", frozen.stdout);
    assert!(frozen.stdout.starts_with(&format!("FROZEN {PROPERTY}")));
    assert!(
        frozen.stdout.contains("signed by citer key `maint`"),
        "{}",
        frozen.stdout
    );

    // The expiry pushed out in place, the name kept: invalid, never honoured.
    std::fs::write(&files[0], text.replace(EXPIRY, "2999-01-01T00:00:00Z")).unwrap();
    let (code, listed) = c.freezes(&[]);
    assert_eq!(code, 2);
    assert_eq!(listed[0]["state"], "invalid");
    let why = listed[0]["error"].as_str().unwrap();
    assert!(
        why.contains("file name does not match its content"),
        "{why}"
    );
    let human = c.run(&["gate", "freezes"], &[]);
    assert!(
        human.stdout.starts_with(&format!(
            "{STORE}/{}: invalid  (its file name",
            name(&files[0])
        )),
        "{}",
        human.stdout
    );
    let edited = c.next_run("edited");
    assert_eq!(edited.code, 1, "{}", edited.stdout);
    assert!(edited.stdout.starts_with(&format!("FAIL {PROPERTY}")));
    assert!(edited.stderr.contains("invalid ("), "{}", edited.stderr);

    // Renamed to match the edited text (the name `gate cite` would give it): the signature
    // refuses it.
    let edited_text = std::fs::read_to_string(&files[0]).unwrap();
    let stem = name(&files[0]).rsplitn(3, '.').nth(2).unwrap().to_string();
    let renamed = files[0].with_file_name(format!(
        "{stem}.{}.json",
        &sha256_hex(edited_text.as_bytes())[..8]
    ));
    std::fs::rename(&files[0], &renamed).unwrap();
    let (code, listed) = c.freezes(&[]);
    assert_eq!(code, 2);
    let why = listed[0]["error"].as_str().unwrap();
    assert!(
        why.contains("does not verify under citer key `maint`"),
        "{why}"
    );
    assert_eq!(c.next_run("renamed").code, 1);
}

/// Lowercase hex SHA-256, computed here (not by the code under test).
fn sha256_hex(bytes: &[u8]) -> String {
    use sha2::Digest as _;
    sha2::Sha256::digest(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[test]
fn a_citation_written_by_hand_is_invalid_under_a_trust_file() {
    let c = Cited::new(true);
    // The deterministic bug of `order_total_nonneg`, which the same-seed review refuses,
    // frozen by a file written by hand with everything current.
    let nonneg = "order_total_nonneg";
    let run = |out: &str| c.prop_run(nonneg, out, &[BUG]);
    let first = run("bug");
    assert_eq!(first.code, 1, "{}", first.stdout);
    let receipt: Value = serde_json::from_str(
        &std::fs::read_to_string(
            c.root
                .path()
                .join(format!("bug/{PATCH}/{nonneg}.receipt.json")),
        )
        .unwrap(),
    )
    .unwrap();
    let digest = c.run(&["gate", "digest", &format!("props/{nonneg}.md")], &[]);
    let pin = c.run(&["gate", "pin", "fixtures/order.json"], &[]);
    let forged = json!({
        "schema_version": 2,
        "patch_id": PATCH,
        "property_id": nonneg,
        "property_digest": digest.stdout.trim(),
        "fixture_pin": pin.stdout.trim().trim_start_matches("sha256:"),
        "bound": "total>=0",
        "signature": receipt["failure_modes"][0]["signature"],
        "fail_id": "x",
        "pass_id": "y",
        "same_seed_review": "waived",
        "code": receipt["code"],
        "code_base": receipt["code_base"],
        "expires_at": "2999-01-01T00:00:00Z",
        "written_at": "2026-12-01T00:00:00Z"
    });
    let text = serde_json::to_string_pretty(&forged).unwrap();
    // Named exactly as `gate cite` would name it.
    let file = c.root.path().join(STORE).join(format!(
        "{nonneg}.20261201T000000Z.{}.json",
        &sha256_hex(text.as_bytes())[..8]
    ));
    std::fs::create_dir_all(file.parent().unwrap()).unwrap();
    std::fs::write(&file, &text).unwrap();
    let again = run("again");
    assert_eq!(again.code, 1, "{}", again.stdout);
    assert!(
        again.stdout.starts_with(&format!("FAIL {nonneg}")),
        "{}",
        again.stdout
    );
    assert!(
        again
            .stderr
            .contains("unsigned: the trust file declares who may cite"),
        "{}",
        again.stderr
    );
    let (code, listed) = c.freezes(&[]);
    assert_eq!(code, 2);
    assert_eq!(listed[0]["state"], "invalid");

    // Without the trust file (which changes the code identity: the forger follows it) the
    // same file is honoured — and said to be unauthenticated.
    std::fs::remove_file(c.root.path().join(TRUST_FILE)).unwrap();
    std::fs::remove_file(&file).unwrap();
    assert_eq!(run("moved").code, 1);
    let moved: Value = serde_json::from_str(
        &std::fs::read_to_string(
            c.root
                .path()
                .join(format!("moved/{PATCH}/{nonneg}.receipt.json")),
        )
        .unwrap(),
    )
    .unwrap();
    let mut forged = forged;
    forged["code"] = moved["code"].clone();
    std::fs::write(&file, serde_json::to_string_pretty(&forged).unwrap()).unwrap();
    let honoured = run("unauthenticated");
    assert_eq!(honoured.code, 0, "{}", honoured.stdout);
    assert!(
        honoured.stdout.contains("unauthenticated citation"),
        "{}",
        honoured.stdout
    );
    let (code, listed) = c.freezes(&[]);
    assert_eq!(code, 0);
    assert_eq!(listed[0]["authenticity"], "unauthenticated");
    let human = c.run(&["gate", "freezes"], &[]);
    assert!(
        human
            .stdout
            .trim_end()
            .ends_with(", unauthenticated citation; flake rate not recorded"),
        "{}",
        human.stdout
    );
}

#[test]
fn the_same_evidence_cannot_be_cited_twice() {
    let c = Cited::new(false);
    let first = c.cite("2030-01-01T00:00:00Z");
    assert_eq!(first.code, 0, "{}\n{}", first.stdout, first.stderr);
    let second = c.cite("2036-01-01T00:00:00Z");
    assert_eq!(second.code, 1, "{}\n{}", second.stdout, second.stderr);
    assert!(
        second
            .stdout
            .contains("is already cited by `props/freezes/")
            && second.stdout.contains("never refreshed or extended"),
        "{}",
        second.stdout
    );
    assert_eq!(c.store().len(), 1);
    // Expired, or made invalid, the citation still holds its evidence.
    let files = c.store();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    std::fs::write(
        &files[0],
        text.replace("\"schema_version\": 3", "\"schema_version\": 9"),
    )
    .unwrap();
    let (code, listed) = c.freezes(&[]);
    assert_eq!((code, listed[0]["state"].as_str()), (2, Some("invalid")));
    let third = c.cite("2036-01-01T00:00:00Z");
    assert_eq!(third.code, 1, "{}\n{}", third.stdout, third.stderr);
    assert!(
        third.stdout.contains("is already cited by"),
        "{}",
        third.stdout
    );
    assert_eq!(c.store().len(), 1);
}

#[test]
fn gate_cite_under_a_trust_file_needs_a_citer_key_in_a_tight_file() {
    let c = Cited::new(true);
    let key = c.key_file.clone().unwrap();
    let no_key = Cited {
        key_file: None,
        ..Cited::new(true)
    };
    let refused = no_key.cite(EXPIRY);
    assert_eq!(refused.code, 2, "{}", refused.stderr);
    assert!(
        refused
            .stderr
            .contains("declares who may cite: give a `citer` key"),
        "{}",
        refused.stderr
    );
    // A key file others may read is refused, as ssh refuses a loose key.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o644)).unwrap();
    let loose = c.cite(EXPIRY);
    assert_eq!(loose.code, 2, "{}", loose.stderr);
    assert!(
        loose.stderr.contains("has mode 0644") && loose.stderr.contains("chmod 600"),
        "{}",
        loose.stderr
    );
    // A remote runner's key is not a citer key.
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    let remote = c.run(
        &["keys", "generate", "--role", "remote", "--key-id", "ci-2"],
        &[],
    );
    std::fs::write(&key, &remote.stdout).unwrap();
    let wrong = c.cite(EXPIRY);
    assert_eq!(wrong.code, 2, "{}", wrong.stderr);
    assert!(
        wrong.stderr.contains("declares for the `remote` role"),
        "{}",
        wrong.stderr
    );
    assert!(c.store().is_empty());
    // A group-writable trust file is refused by every command that reads it.
    let trust = c.root.path().join(TRUST_FILE);
    std::fs::set_permissions(&trust, std::fs::Permissions::from_mode(0o664)).unwrap();
    let (code, _) = c.freezes(&[]);
    assert_eq!(code, 2);
    let out = c.run(&["gate", "freezes"], &[]);
    assert!(
        out.stderr.contains("trust file") && out.stderr.contains("has mode 0664"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_clock_before_the_newest_citation_cannot_judge_expiry() {
    let c = Cited::new(false);
    assert_eq!(c.cite(EXPIRY).code, 0);
    // A citation written "in the future" says the clock is behind: every command that judges
    // expiry refuses.
    let files = c.store();
    let text = std::fs::read_to_string(&files[0]).unwrap();
    let written = serde_json::from_str::<Value>(&text).unwrap()["written_at"]
        .as_str()
        .unwrap()
        .to_string();
    std::fs::write(&files[0], text.replace(&written, "2998-01-01T00:00:00Z")).unwrap();
    let (code, _) = c.freezes(&[]);
    assert_eq!(code, 2);
    let out = c.run(&["gate", "freezes"], &[]);
    assert!(
        out.stderr
            .contains("earlier than a citation in the store was written (2998-01-01T00:00:00Z)"),
        "{}",
        out.stderr
    );
    let run = c.next_run("behind");
    assert_eq!(run.code, 2, "{}\n{}", run.stdout, run.stderr);
    assert!(run.stderr.contains("set the clock"), "{}", run.stderr);
    let cite = c.cite("2999-01-01T00:00:00Z");
    assert_eq!(cite.code, 2, "{}", cite.stderr);
    // `--at` before 1970 is refused; at a time of its own choosing the listing goes on.
    let (code, _) = c.freezes(&["--at", "1969-12-31T23:59:59Z"]);
    assert_eq!(code, 2);
    let (code, listed) = c.freezes(&["--at", "2999-06-01T00:00:00Z"]);
    assert_eq!((code, listed[0]["state"].as_str()), (0, Some("expired")));
}

#[test]
fn property_ids_outside_the_id_rule_are_refused() {
    let c = Cited::new(false);
    let rows = format!("local/{PATCH}/{PROPERTY}.witness.jsonl");
    let spec = format!("props/{PROPERTY}.md");
    for bad in ["a b", "-x", "é", ""] {
        let out = c.run(
            &[
                "gate",
                "decide",
                &format!("--property={bad}"),
                "--spec",
                &spec,
                "--witnesses",
                &rows,
            ],
            &[],
        );
        assert_eq!(out.code, 2, "{bad:?}: {}\n{}", out.stdout, out.stderr);
        assert!(
            out.stderr.contains("is not allowed"),
            "{bad:?}: {}",
            out.stderr
        );
    }
}

#[test]
fn ci_gate_shows_what_a_patch_changes_about_freezing() {
    let c = Cited::new(true);
    let gate = || {
        c.run(
            &[
                "ci", "gate", "--local", "local", "--remote", "remote", "--base", &c.base,
            ],
            &[],
        )
    };
    // Nothing changed yet.
    let quiet = gate();
    assert_eq!(quiet.code, 0, "{}\n{}", quiet.stdout, quiet.stderr);
    assert!(
        quiet
            .stdout
            .contains("the patch changes no citation and no trust-file line")
    );

    // An added citation signed by the base's citer key verifies.
    assert_eq!(c.cite(EXPIRY).code, 0);
    let files = c.store();
    let added = gate();
    assert_eq!(added.code, 0, "{}", added.stdout);
    assert!(
        added.stdout.contains(&format!(
            "citation added: {STORE}/{}: verifies (signed by citer key `maint` of the base's trust file)",
            name(&files[0])
        )),
        "{}",
        added.stdout
    );
    // Committed into the base, then edited by the patch: the job fails.
    git(c.root.path(), &["add", STORE]);
    git(c.root.path(), &["commit", "-q", "-m", "cite"]);
    let base = git(c.root.path(), &["rev-parse", "HEAD"]);
    let diff = |c: &Cited| c.run(&["gate", "freezes", "--base", &base], &[]);
    let text = std::fs::read_to_string(&files[0]).unwrap();
    std::fs::write(&files[0], text.replace(EXPIRY, "2999-01-01T00:00:00Z")).unwrap();
    let edited = diff(&c);
    assert_eq!(edited.code, 1, "{}", edited.stdout);
    assert!(
        edited.stdout.contains("citation edited: "),
        "{}",
        edited.stdout
    );
    // Removed: fails too.
    std::fs::remove_file(&files[0]).unwrap();
    let removed = diff(&c);
    assert_eq!(removed.code, 1, "{}", removed.stdout);
    assert!(
        removed.stdout.contains("citation removed: "),
        "{}",
        removed.stdout
    );
    std::fs::write(&files[0], &text).unwrap();
    assert_eq!(diff(&c).code, 0);

    // Another branch cited the same evidence (its store did not hold the base's citation):
    // its citation verifies, but names evidence the base's citation already names.
    let aside = c.root.path().join("target/aside.json");
    std::fs::rename(&files[0], &aside).unwrap();
    let again = c.cite("2031-01-01T00:00:00Z");
    assert_eq!(again.code, 0, "{}\n{}", again.stdout, again.stderr);
    std::fs::rename(&aside, &files[0]).unwrap();
    let twice = diff(&c);
    assert_eq!(twice.code, 1, "{}", twice.stdout);
    assert!(
        twice.stdout.contains(&format!(
            "is already cited by {STORE}/{}: one piece of evidence backs one citation",
            name(&files[0])
        )),
        "{}",
        twice.stdout
    );
}

#[test]
fn a_patch_cannot_vouch_for_its_own_citation() {
    // The base trusts citer `maint`; the patch adds its own citer key `mallory` to the trust
    // file and cites with it. Its own run would honour the citation (the work tree's trust
    // file declares `mallory`), so the gate job must catch it.
    let mut c = Cited::new(true);
    let mine = c.run(
        &["keys", "generate", "--role", "citer", "--key-id", "mallory"],
        &[],
    );
    assert_eq!(mine.code, 0, "{}", mine.stderr);
    let key = c.root.path().join("target/mallory.key");
    std::fs::write(&key, &mine.stdout).unwrap();
    std::fs::set_permissions(&key, std::fs::Permissions::from_mode(0o600)).unwrap();
    c.key_file = Some(key);
    // The trust file is part of the code: the patch's evidence is of this code.
    c.evidence();
    let cited = c.cite(EXPIRY);
    assert_eq!(cited.code, 0, "{}\n{}", cited.stdout, cited.stderr);
    let files = c.store();
    let frozen = c.next_run("frozen");
    assert_eq!(
        frozen.code, 0,
        "the patch's own run honours it: {}",
        frozen.stdout
    );
    // A hand-written file beside it.
    std::fs::write(
        c.root.path().join(STORE).join("forged.json"),
        "{\"fail_id\": \"x\"}",
    )
    .unwrap();
    // And a link to the citation, under another name.
    std::os::unix::fs::symlink(&files[0], c.root.path().join(STORE).join("link.json")).unwrap();
    let out = c.run(
        &[
            "ci", "gate", "--local", "local", "--remote", "remote", "--base", &c.base,
        ],
        &[],
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains("trust file: line added: "),
        "{}",
        out.stdout
    );
    assert!(out.stdout.contains("\"mallory\""), "{}", out.stdout);
    assert!(
        out.stdout.contains(&format!(
            "citation added: {STORE}/{}: does not verify: signed by key `mallory`, which the trust file does not declare",
            name(&files[0])
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "citation added: {STORE}/forged.json: does not verify: "
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains(&format!(
            "citation added: {STORE}/link.json: does not verify: a symbolic link, never honoured"
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout
            .contains("3 change(s) to the freeze store fail this job"),
        "{}",
        out.stdout
    );
}

#[test]
fn gate_freezes_base_reads_the_base_of_a_workspace_below_the_repository_top() {
    // The repository's top holds `ws/`, the workspace: the base's trust file is
    // `ws/props/trusted-runners.jsonl` in git.
    let root = Root::new();
    let ws = root.path().join("ws");
    std::fs::create_dir(&ws).unwrap();
    for sub in ["props", "fixtures"] {
        std::fs::rename(root.path().join(sub), ws.join(sub)).unwrap();
    }
    git(root.path(), &["init", "-q"]);
    let out = root.run(&["keys", "generate", "--role", "citer", "--root", "ws"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    git(root.path(), &["add", "."]);
    git(root.path(), &["commit", "-q", "-m", "base"]);
    let base = git(root.path(), &["rev-parse", "HEAD"]);
    let store = ws.join(STORE);
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("forged.json"), "{\"fail_id\": \"x\"}").unwrap();
    let diff = root.run(&["gate", "freezes", "--root", "ws", "--base", &base]);
    assert_eq!(diff.code, 1, "{}\n{}", diff.stdout, diff.stderr);
    assert!(
        diff.stdout
            .contains("citation added: ws/props/freezes/forged.json: does not verify: ")
            || diff
                .stdout
                .contains("citation added: props/freezes/forged.json: does not verify: "),
        "{}",
        diff.stdout
    );
    assert!(!diff.stdout.contains("trust file added"), "{}", diff.stdout);
}

#[test]
fn a_patch_does_not_revive_a_citation_its_base_refuses() {
    // The base holds a trust file and, beside it, a citation written by hand: invalid there.
    let c = Cited::new(true);
    let text = serde_json::to_string_pretty(&json!({
        "schema_version": 2, "patch_id": PATCH, "property_id": PROPERTY,
        "property_digest": "d".repeat(64), "fixture_pin": "e".repeat(64), "bound": "b",
        "signature": "s", "fail_id": "x", "pass_id": "y", "same_seed_review": "waived",
        "code": "commit:0", "expires_at": "2999-01-01T00:00:00Z",
        "written_at": "2026-01-01T00:00:00Z"
    }))
    .unwrap();
    let store = c.root.path().join(STORE);
    std::fs::create_dir_all(&store).unwrap();
    std::fs::write(store.join("by-hand.json"), &text).unwrap();
    git(c.root.path(), &["add", STORE]);
    git(c.root.path(), &["commit", "-q", "-m", "a citation by hand"]);
    let base = git(c.root.path(), &["rev-parse", "HEAD"]);
    assert_eq!(
        c.run(&["gate", "freezes", "--base", &base], &[]).code,
        0,
        "nothing changed yet"
    );
    // The patch deletes the trust file: the file would be honoured, unauthenticated.
    std::fs::remove_file(c.root.path().join(TRUST_FILE)).unwrap();
    let out = c.run(&["gate", "freezes", "--base", &base], &[]);
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
    assert!(
        out.stdout.contains(&format!(
            "citation revived: {STORE}/by-hand.json: the base's trust file refuses it (its file name does not match its content"
        )),
        "{}",
        out.stdout
    );
    assert!(
        out.stdout.contains("trust file removed: "),
        "{}",
        out.stdout
    );
}

#[test]
fn two_cites_of_one_piece_of_evidence_at_once_write_one_citation() {
    let c = Cited::new(false);
    let receipt = format!("local/{PATCH}/{PROPERTY}.receipt.json");
    let (local, remote) = (
        format!("local/{PATCH}/{PROPERTY}.witness.jsonl"),
        format!("remote/{PATCH}/{PROPERTY}.witness.jsonl"),
    );
    for round in 0..3 {
        let children: Vec<_> = ["2030-01-01T00:00:00Z", "2031-01-01T00:00:00Z"]
            .into_iter()
            .map(|expiry| {
                c.root
                    .command(&[
                        "gate",
                        "cite",
                        "--property",
                        PROPERTY,
                        "--witnesses",
                        &local,
                        &remote,
                        "--receipts",
                        &receipt,
                        "--expires-at",
                        expiry,
                    ])
                    .stdout(std::process::Stdio::piped())
                    .stderr(std::process::Stdio::piped())
                    .spawn()
                    .unwrap()
            })
            .collect();
        let mut codes: Vec<i32> = children
            .into_iter()
            .map(|child| child.wait_with_output().unwrap().status.code().unwrap())
            .collect();
        codes.sort_unstable();
        assert_eq!(codes, [0, 1], "round {round}");
        assert_eq!(c.store().len(), 1, "round {round}");
        std::fs::remove_dir_all(c.root.path().join(STORE)).unwrap();
    }
}

#[test]
fn a_bound_left_todo_is_warned_about_and_never_cited() {
    let spec = format!("props/{PROPERTY}.md");
    let c = Cited::with(false, |root| {
        let path = root.join(&spec);
        let text = std::fs::read_to_string(&path).unwrap();
        let bound = text.lines().find(|l| l.starts_with("bound:")).unwrap();
        std::fs::write(
            &path,
            text.replace(bound, "bound: TODO: what must always hold"),
        )
        .unwrap();
    });
    let run = c.next_run("todo");
    assert!(
        run.stderr.contains(&format!(
            "warning: props/{PROPERTY}.md's bound still says TODO (`TODO: what must always hold`)"
        )),
        "{}",
        run.stderr
    );
    let cited = c.cite(EXPIRY);
    assert_eq!(cited.code, 1, "{}\n{}", cited.stdout, cited.stderr);
    assert!(
        cited
            .stdout
            .contains("citation refused: props/order_receipt_roundtrip.md's bound still says TODO"),
        "{}",
        cited.stdout
    );
    assert!(c.store().is_empty());
}
