//! Files that fail closed: ids that cannot name files one-to-one are
//! refused, evidence is never written or read through a symbolic link, and readers refuse
//! what is not a regular file or is past its size bound — each with a clear error, exit 2.

use crate::support::Root;

#[test]
fn patch_ids_that_would_collide_or_escape_are_refused_naming_the_rule() {
    let root = Root::new();
    for bad in ["..", ".", "_", "a/b", "-x", "pr 7"] {
        let patch = format!("--patch-id={bad}");
        let run = root.run(&[
            "prop",
            "run",
            "--property",
            "order_total_nonneg",
            "--seeds",
            "1",
            &patch,
        ]);
        assert_eq!(run.code, 2, "{bad}: {}", run.stderr);
        assert!(
            run.stderr.contains(&format!(
                "patch id `{bad}` is not allowed: use ASCII letters, digits, `.`, `_` and `-`"
            )),
            "{bad}: {}",
            run.stderr
        );
        assert!(
            !root.path().join("target/seedledger").exists(),
            "{bad}: nothing written"
        );
    }
    let ok = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1",
        "--patch-id",
        "a_b",
    ]);
    assert_eq!(ok.code, 0, "{}", ok.stderr);
}

#[cfg(unix)]
#[test]
fn a_witness_file_that_is_a_symbolic_link_is_refused_and_its_target_untouched() {
    let root = Root::new();
    let dir = root.path().join("target/seedledger/local");
    std::fs::create_dir_all(&dir).unwrap();
    let target = root.path().join("precious.txt");
    // A torn last line: an append through the link would first cut it off.
    std::fs::write(&target, "keep me\n{\"torn\": ").unwrap();
    std::os::unix::fs::symlink(&target, dir.join("order_total_nonneg.witness.jsonl")).unwrap();
    let run = root.run(&[
        "prop",
        "run",
        "--property",
        "order_total_nonneg",
        "--seeds",
        "1",
    ]);
    assert_ne!(run.code, 0);
    assert!(run.stderr.contains("is a symbolic link"), "{}", run.stderr);
    assert_eq!(
        std::fs::read_to_string(&target).unwrap(),
        "keep me\n{\"torn\": "
    );
}

#[cfg(unix)]
#[test]
fn readers_refuse_links_devices_and_oversized_files() {
    let root = Root::new();
    let run = root.run(&["gate", "close", "/dev/urandom"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("cannot read receipt `/dev/urandom`: not a regular file"),
        "{}",
        run.stderr
    );
    let receipt = root.path().join("r.json");
    std::fs::write(&receipt, "{}").unwrap();
    std::os::unix::fs::symlink(&receipt, root.path().join("link.json")).unwrap();
    let run = root.run(&["gate", "close", "link.json"]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr.contains("it is a symbolic link"),
        "{}",
        run.stderr
    );
    // A spec past 1 MiB is refused before anything is decided.
    let big = format!(
        "---\nproperty_id: order_total_nonneg\nbound: total>=0\nfixture: fixtures/order.json\noracle_source: human_reviewed\n---\n{}",
        "x".repeat(1 << 20)
    );
    std::fs::write(root.path().join("big.md"), big).unwrap();
    std::fs::write(root.path().join("w.jsonl"), "").unwrap();
    let run = root.run(&[
        "gate",
        "decide",
        "--property",
        "order_total_nonneg",
        "--spec",
        "big.md",
        "--witnesses",
        "w.jsonl",
    ]);
    assert_eq!(run.code, 2);
    assert!(
        run.stderr
            .contains("bytes is more than the 1048576 bytes a spec may have"),
        "{}",
        run.stderr
    );
}

/// SPEC "Properties without a fixture": `fixture: none` reads no file; the pin is that of
/// the empty bytes, the receipt can close, and the gate computes the same pin.
#[test]
fn a_property_without_a_fixture_needs_no_fixture_file() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("props")).unwrap();
    std::fs::write(
        tmp.path().join("props/passes.md"),
        "---\nproperty_id: passes\nbound: returns\nfixture: none\noracle_source: human_reviewed\n---\nReads no file.\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        crate::support::crash_command(tmp.path(), args)
            .output()
            .unwrap()
    };
    let out = run(&["prop", "run", "--property", "passes", "--seeds", "1..=3"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let receipt: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(
            tmp.path()
                .join("target/seedledger/local/passes.receipt.json"),
        )
        .unwrap(),
    )
    .unwrap();
    // sha256(b"fixture-v1\n"), computed independently.
    let empty_pin = seedledger_format::sha256_hex(b"fixture-v1\n");
    assert_eq!(receipt["fixture_hash"], format!("sha256:{empty_pin}"));
    assert_eq!(receipt["fixture_changed"], false);
    assert_eq!(receipt["stopped_early"], false);
    let decide = run(&[
        "gate",
        "decide",
        "--property",
        "passes",
        "--witnesses",
        "target/seedledger/local/passes.witness.jsonl",
    ]);
    let stderr = String::from_utf8_lossy(&decide.stderr);
    assert!(
        stderr.contains(&format!("pin {empty_pin} (`none`)")),
        "{stderr}"
    );
}

#[test]
fn prop_new_writes_a_draft_spec_the_runner_reads_and_never_overwrites_it() {
    let tmp = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(tmp.path().join("props")).unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(env!("CARGO_BIN_EXE_testbed"))
            .args(args)
            .current_dir(tmp.path())
            .output()
            .unwrap()
    };
    let out = run(&["prop", "new", "my_prop", "--bound", "x<=100"]);
    assert_eq!(out.status.code(), Some(0));
    let stdout = String::from_utf8(out.stdout).unwrap();
    assert!(
        stdout.starts_with("wrote props/my_prop.md (oracle_source: model_draft)\n"),
        "{stdout}"
    );
    assert!(stdout.contains("fn my_prop(tc: &mut TestCase, _fixture: &Fixture) -> PropResult {"));
    let text = std::fs::read_to_string(tmp.path().join("props/my_prop.md")).unwrap();
    let spec = seedledger_format::SpecFile::parse(&text).unwrap();
    assert_eq!(
        (
            spec.property_id.as_str(),
            spec.bound.as_str(),
            spec.fixture.as_str()
        ),
        ("my_prop", "x<=100", "none")
    );
    assert_eq!(
        spec.oracle_source,
        seedledger_format::OracleSource::ModelDraft
    );
    // Never over an existing spec; never an id that is no file name.
    std::fs::write(tmp.path().join("props/my_prop.md"), "edited by a person\n").unwrap();
    let again = run(&["prop", "new", "my_prop"]);
    assert_eq!(again.status.code(), Some(2));
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("props/my_prop.md")).unwrap(),
        "edited by a person\n"
    );
    assert_eq!(run(&["prop", "new", "../x"]).status.code(), Some(2));
    // An id that is no Rust name still gets a function that compiles.
    let odd = run(&["prop", "new", "7-up.v2"]);
    let stdout = String::from_utf8(odd.stdout).unwrap();
    assert!(
        stdout.contains("fn prop_7_up_v2(tc: &mut TestCase"),
        "{stdout}"
    );
    assert!(
        stdout.contains("register!(Property::new(\"7-up.v2\", prop_7_up_v2));")
            && stdout.contains("check_registered(\"7-up.v2\")"),
        "{stdout}"
    );
}
