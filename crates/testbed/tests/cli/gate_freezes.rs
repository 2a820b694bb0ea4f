//! `cargo xtask gate freezes` end to end: every file of the freeze store listed with its state
//! (SPEC: Freeze store and honoured freezes) — `active`, `expired`, `retired (<what
//! changed>)` — judged against the work tree of a scratch git repository, and a file that is
//! not a citation listed as `invalid` (exit 2).

use crate::gate::{Dir, Run, edit, json_lines, keys};
use serde_json::{Value, json};

const FUTURE: &str = "2999-01-01T00:00:00Z";
const PAST: &str = "2001-01-01T00:00:00Z";
const STORE: &str = "props/freezes";

/// A repository with a base commit (spec, fixture) and a patch commit on top, and what is
/// current in it, computed by the test through git.
struct Repo {
    dir: Dir,
    base: String,
    /// `commit:<base>`: the code identity before the patch.
    old: String,
    /// `commit:<HEAD>`: the code identity now, without a base.
    code: String,
    /// `diff:<sha256>`: the code identity now, against the base.
    diff: String,
}

impl Repo {
    fn new() -> Repo {
        let dir = Dir::repo();
        let base = dir.git(&["rev-parse", "HEAD"]);
        let old = dir.head_code();
        dir.commit("patch.rs", "// the patch under test\n");
        let code = dir.head_code();
        let diff = dir.diff_code(&base);
        Repo {
            dir,
            base,
            old,
            code,
            diff,
        }
    }

    /// A citation of the workspace's property that matches the work tree now (HEAD mode),
    /// with `changes` applied.
    fn citation(&self, changes: Value) -> Value {
        let c = json!({
            "schema_version": 2,
            "patch_id": "agent-1842",
            "property_id": "order_total_nonneg",
            "property_digest": self.dir.digest(),
            "fixture_pin": self.dir.pin(),
            "bound": "total>=0",
            "signature": "AssertionError",
            "fail_id": "w-local-1",
            "pass_id": "w-remote-9",
            "seed": 17,
            "same_seed_review": "passed",
            "code": self.code,
            "expires_at": FUTURE,
            "written_at": "2026-12-01T00:00:00Z"
        });
        edit(c, changes)
    }

    fn write_citation(&self, file: &str, changes: Value) {
        self.dir.write(
            &format!("{STORE}/{file}"),
            serde_json::to_string_pretty(&self.citation(changes)).unwrap(),
        );
    }

    fn freezes(&self, extra: &[&str]) -> Run {
        let mut args = vec!["gate", "freezes"];
        args.extend(extra);
        self.dir.run(&args)
    }

    /// `gate freezes --format json`: `(file name, state)` per line; exit 0 asserted.
    fn states(&self, extra: &[&str]) -> Vec<(String, String)> {
        let mut args = vec!["--format", "json"];
        args.extend(extra);
        let run = self.freezes(&args);
        assert_eq!(run.code, 0, "{}", run.stderr);
        json_lines(&run.stdout)
            .iter()
            .map(|v| {
                let path = v["citation"].as_str().unwrap();
                let name = path.strip_prefix("props/freezes/").unwrap_or(path);
                (name.to_string(), v["state"].as_str().unwrap().to_string())
            })
            .collect()
    }
}

fn pairs(expected: &[(&str, &str)]) -> Vec<(String, String)> {
    expected
        .iter()
        .map(|(f, s)| (f.to_string(), s.to_string()))
        .collect()
}

#[test]
fn freezes_lists_every_state() {
    let r = Repo::new();
    let zeros = "0".repeat(64);
    // (file, changes to a current citation, state); files sort in this order.
    let table = [
        ("a-active.json", json!({}), "active"),
        (
            "b-active-against-a-base.json",
            json!({"code": r.diff, "code_base": r.base}),
            "active",
        ),
        (
            "c-active-waived.json",
            json!({"same_seed_review": "waived", "seed": null}),
            "active",
        ),
        ("d-expired.json", json!({"expires_at": PAST}), "expired"),
        (
            "e-spec-changed.json",
            json!({"property_digest": zeros}),
            "retired (spec changed)",
        ),
        (
            "f-spec-gone.json",
            json!({"property_id": "gone"}),
            "retired (spec changed)",
        ),
        (
            "g-fixture-changed.json",
            json!({"fixture_pin": zeros}),
            "retired (fixture changed)",
        ),
        (
            "h-diff-changed.json",
            json!({"code": r.old}),
            "retired (diff changed)",
        ),
        (
            "i-diff-changed-against-a-base.json",
            json!({"code": format!("diff:{zeros}"), "code_base": r.base}),
            "retired (diff changed)",
        ),
        (
            "j-base-unknown-to-git.json",
            json!({"code": r.diff, "code_base": "0".repeat(40)}),
            "retired (diff changed)",
        ),
        // First match wins: spec, fixture, diff, then expiry.
        (
            "k-everything-changed.json",
            json!({"property_digest": zeros, "fixture_pin": zeros, "code": r.old, "expires_at": PAST}),
            "retired (spec changed)",
        ),
        (
            "l-fixture-and-diff-changed.json",
            json!({"fixture_pin": zeros, "code": r.old}),
            "retired (fixture changed)",
        ),
        (
            "m-retired-and-expired.json",
            json!({"code": r.old, "expires_at": PAST}),
            "retired (diff changed)",
        ),
    ];
    for (file, changes, _) in &table {
        r.write_citation(file, changes.clone());
    }
    // Not a `.json` file: not a citation, not listed.
    r.dir.write(&format!("{STORE}/README.md"), "notes\n");

    let run = r.freezes(&[]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let human: Vec<String> = table
        .iter()
        .map(|(file, changes, state)| {
            let c = r.citation(changes.clone());
            format!(
                "props/freezes/{file}: {state}  property {} [AssertionError] expires {}, patch agent-1842, same-seed review {}, unauthenticated citation; flake rate not recorded",
                c["property_id"].as_str().unwrap(),
                c["expires_at"].as_str().unwrap(),
                c["same_seed_review"].as_str().unwrap()
            )
        })
        .collect();
    assert_eq!(run.stdout.lines().collect::<Vec<_>>(), human);

    let run = r.freezes(&["--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    let lines = json_lines(&run.stdout);
    assert_eq!(lines.len(), table.len());
    for (line, (file, changes, state)) in lines.iter().zip(&table) {
        let c = r.citation(changes.clone());
        assert_eq!(
            line,
            &json!({
                "citation": format!("props/freezes/{file}"),
                "state": state,
                "property_id": c["property_id"],
                "signature": "AssertionError",
                "expires_at": c["expires_at"],
                "patch_id": "agent-1842",
                "seed": c["seed"],
                "same_seed_review": c["same_seed_review"],
                "authenticity": "unauthenticated",
                "error": null,
            }),
            "{file}"
        );
    }
    // Every state string SPEC names was reached.
    let mut reached: Vec<&str> = table.iter().map(|(_, _, s)| *s).collect();
    reached.sort_unstable();
    reached.dedup();
    assert_eq!(
        reached,
        [
            "active",
            "expired",
            "retired (diff changed)",
            "retired (fixture changed)",
            "retired (spec changed)"
        ]
    );
}

#[test]
fn freezes_at_judges_expiry_at_that_time() {
    let r = Repo::new();
    r.write_citation("c.json", json!({"expires_at": "2030-01-01T00:00:00Z"}));
    for (at, state) in [
        ("2029-12-31T23:59:59Z", "active"),
        ("2030-01-01T00:59:59+01:00", "active"),
        // Expired from the expiry on, at the same instant however it is written.
        ("2030-01-01T00:00:00Z", "expired"),
        ("2030-01-01T01:00:00+01:00", "expired"),
        ("2031-06-01T00:00:00Z", "expired"),
        ("1970-01-01T00:00:00Z", "active"),
    ] {
        assert_eq!(
            r.states(&["--at", at]),
            pairs(&[("c.json", state)]),
            "--at {at}"
        );
    }
    // What changed is reported before the date: a retired citation is retired at any time.
    r.write_citation("d.json", json!({"code": r.old}));
    assert_eq!(
        r.states(&["--at", "2029-01-01T00:00:00Z"]),
        pairs(&[("c.json", "active"), ("d.json", "retired (diff changed)")])
    );
    for bad in [
        "tomorrow",
        "",
        "2030-01-01",
        "2030-01-01T00:00:00",
        "2030-13-01T00:00:00Z",
    ] {
        let run = r.freezes(&["--at", bad]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stdout);
        assert_eq!(run.stdout, "", "{bad}");
        assert!(
            run.stderr
                .contains(&format!("`--at {bad}` is not an RFC 3339 time")),
            "{bad}: {}",
            run.stderr
        );
        assert!(!run.stderr.contains("panicked"));
    }
}

#[test]
fn freezes_a_file_that_is_not_a_citation_is_invalid_and_exits_2() {
    let r = Repo::new();
    r.write_citation("a-active.json", json!({}));
    let good = serde_json::to_string_pretty(&r.citation(json!({}))).unwrap();
    let expires = format!("\"expires_at\": \"{FUTURE}\"");
    assert!(good.contains(&expires));
    // (file, contents, what the error names)
    let table = [
        (
            // An expired expiry first, a future one last: a last-wins reader would honour it.
            "b-repeated-key.json",
            good.replacen(
                &expires,
                &format!("\"expires_at\": \"{PAST}\",\n  {expires}"),
                1,
            ),
            "duplicate key `expires_at`",
        ),
        (
            "c-schema-1.json",
            good.replacen("\"schema_version\": 2", "\"schema_version\": 1", 1),
            "field `schema_version`",
        ),
        (
            "d-no-signature.json",
            good.replacen("\"signature\": \"AssertionError\",", "", 1),
            "field `signature`",
        ),
        ("e-not-json.json", "nope\n".to_string(), "not JSON"),
        ("f-empty.json", String::new(), "not JSON"),
        (
            "g-bad-expiry.json",
            good.replacen(&expires, "\"expires_at\": \"soon\"", 1),
            "field `expires_at`",
        ),
    ];
    for (file, text, _) in &table {
        assert_ne!(text, &good, "{file}");
        r.dir.write(&format!("{STORE}/{file}"), text);
    }
    let run = r.freezes(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    let lines: Vec<&str> = run.stdout.lines().collect();
    assert_eq!(lines.len(), table.len() + 1, "{}", run.stdout);
    assert!(
        lines[0].starts_with("props/freezes/a-active.json: active  property"),
        "{}",
        lines[0]
    );
    for (line, (file, _, needle)) in lines[1..].iter().zip(&table) {
        assert!(
            line.starts_with(&format!("props/freezes/{file}: invalid  (")) && line.contains(needle),
            "{file}: {line}"
        );
        assert!(
            run.stderr
                .contains(&format!("error: citation `props/freezes/{file}`: ")),
            "{file}: {}",
            run.stderr
        );
    }
    let run = r.freezes(&["--format", "json"]);
    assert_eq!(run.code, 2);
    let lines = json_lines(&run.stdout);
    assert_eq!(lines[0]["state"], "active");
    for (line, (file, _, needle)) in lines[1..].iter().zip(&table) {
        assert_eq!(keys(line), ["citation", "error", "state"], "{file}");
        assert_eq!(
            (&line["citation"], &line["state"]),
            (&json!(format!("props/freezes/{file}")), &json!("invalid")),
        );
        assert!(line["error"].as_str().unwrap().contains(needle), "{line}");
    }
}

/// A citation is read only from a regular file: a symbolic link, even to a valid citation,
/// is invalid.
#[cfg(unix)]
#[test]
fn freezes_a_symbolic_link_is_invalid() {
    let r = Repo::new();
    r.dir.write(
        "elsewhere/c.json",
        serde_json::to_string_pretty(&r.citation(json!({}))).unwrap(),
    );
    std::fs::create_dir_all(r.dir.path().join(STORE)).unwrap();
    std::os::unix::fs::symlink(
        r.dir.path().join("elsewhere/c.json"),
        r.dir.path().join(STORE).join("link.json"),
    )
    .unwrap();
    let run = r.freezes(&[]);
    assert_eq!(run.code, 2, "{}", run.stderr);
    assert!(
        run.stdout
            .starts_with("props/freezes/link.json: invalid  (is a symbolic link"),
        "{}",
        run.stdout
    );
    // The same file through `--store` is a regular file, and active.
    assert_eq!(
        r.states(&["--store", "elsewhere"]),
        pairs(&[("elsewhere/c.json", "active")])
    );
}

#[test]
fn freezes_store_and_root_say_where_to_look_and_what_is_current() {
    let r = Repo::new();
    // No store yet, then an empty one: nothing listed, exit 0, a note says where it looked.
    for _ in 0..2 {
        let run = r.freezes(&[]);
        assert_eq!((run.code, run.stdout.as_str()), (0, ""), "{}", run.stderr);
        assert!(
            run.stderr.contains("note: no citations in `props/freezes`"),
            "{}",
            run.stderr
        );
        std::fs::create_dir_all(r.dir.path().join(STORE)).unwrap();
    }
    r.write_citation("c.json", json!({}));
    r.dir.write(
        "elsewhere/d.json",
        serde_json::to_string_pretty(&r.citation(json!({"code": r.old}))).unwrap(),
    );
    assert_eq!(r.states(&[]), pairs(&[("c.json", "active")]));
    assert_eq!(
        r.states(&["--store", "elsewhere"]),
        pairs(&[("elsewhere/d.json", "retired (diff changed)")])
    );
    // `--root` names the work tree: this one, absolutely, says the same...
    let root = r.dir.path().display().to_string();
    let run = r.freezes(&["--root", &root, "--format", "json"]);
    assert_eq!(run.code, 0, "{}", run.stderr);
    assert_eq!(
        json_lines(&run.stdout)
            .iter()
            .map(|v| v["state"].as_str().unwrap().to_string())
            .collect::<Vec<_>>(),
        ["active"]
    );
    // ...and a root without the spec retires it (the store named explicitly).
    assert_eq!(
        r.states(&["--root", "nowhere", "--store", STORE]),
        pairs(&[("c.json", "retired (spec changed)")])
    );
}

/// A citation `gate cite` wrote, followed through the work tree's changes: each change
/// retires it, undoing the change makes it active again.
#[test]
fn freezes_follows_a_written_citation_through_every_change() {
    let r = Repo::new();
    // The fail the run of `r.json` wrote beside it (seed 1103), and a remote pass on it.
    r.dir.evidence("r.json", json!({"code": r.code}));
    r.dir.write_rows(
        "w.jsonl",
        &[
            r.dir
                .run_row("order_total_nonneg.witness.jsonl", "run-r-1103"),
            edit(
                r.dir.row_on(1103, "w-remote-9", "pass", "ok", "remote"),
                json!({"patch_id": "agent-1842", "code": r.code}),
            ),
        ],
    );
    let cited = r.dir.run(&[
        "gate",
        "cite",
        "--property",
        "order_total_nonneg",
        "--witnesses",
        "w.jsonl",
        "--receipts",
        "r.json",
        "--expires-at",
        "2999-01-01T00:00:00Z",
    ]);
    assert_eq!(cited.code, 0, "{}", cited.stderr);
    let names: Vec<(String, String)> = r.states(&[]);
    assert_eq!(names.len(), 1);
    let name = names[0].0.clone();
    let state = |want: &str| pairs(&[(name.as_str(), want)]);
    assert_eq!(r.states(&[]), state("active"));
    assert_eq!(r.states(&["--at", FUTURE]), state("expired"));

    let original = |rel: &str| r.dir.read(rel);
    for (rel, want) in [
        ("props/order_total_nonneg.md", "retired (spec changed)"),
        ("fixtures/order.json", "retired (fixture changed)"),
        ("patch.rs", "retired (diff changed)"),
    ] {
        let text = original(rel);
        r.dir.write(rel, format!("{text}\n"));
        assert_eq!(r.states(&[]), state(want), "{rel} changed");
        r.dir.write(rel, &text);
        assert_eq!(r.states(&[]), state("active"), "{rel} restored");
    }
    // An untracked file is not part of the code identity.
    r.dir.write("notes.txt", "scratch\n");
    assert_eq!(r.states(&[]), state("active"));
}
