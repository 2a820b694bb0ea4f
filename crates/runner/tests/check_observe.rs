//! `check` from `cargo test` with `SEEDLEDGER_OBSERVE` set: the run's trials are observed into
//! the file it names, one `test_case` line per attempted seed with the receipt's verdict, and
//! an `info` line. A test binary of its own, with one test: the variable is read once per
//! process.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

use seedledger_runner::{Fixture, PropResult, Property, TestCase, int, prop_assert, try_check_in};

/// Discards multiples of 5, fails from 50 up: passes, failures and discards.
fn skips_fives(tc: &mut TestCase, _: &Fixture) -> PropResult {
    let x = tc.draw_named("x", &int(0..=99u64));
    tc.assume(!x.is_multiple_of(5));
    prop_assert!(x < 50);
    Ok(())
}

#[test]
fn check_observes_into_the_file_the_variable_names() {
    let root = tempfile::tempdir().unwrap();
    std::fs::create_dir(root.path().join("props")).unwrap();
    std::fs::write(
        root.path().join("props/skips_fives.md"),
        "---\nproperty_id: skips_fives\nbound: x < 50\nfixture: none\noracle_source: human_reviewed\n---\nDiscards fives.\n",
    )
    .unwrap();
    let file = root.path().join("observed.jsonl");
    // SAFETY: the only test of this binary, before anything reads the environment.
    unsafe { std::env::set_var("SEEDLEDGER_OBSERVE", &file) };
    let message =
        try_check_in(&Property::new("skips_fives", skips_fives), root.path()).unwrap_err();
    assert!(
        message.starts_with("property skips_fives failed on "),
        "{message}"
    );

    let receipt_path = root
        .path()
        .join("target/seedledger/local/skips_fives.receipt.json");
    let receipt: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(receipt_path).unwrap()).unwrap();
    let verdicts = receipt["verdicts"].as_str().unwrap();
    let lines: Vec<serde_json::Value> = std::fs::read_to_string(&file)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let planned: String = lines
        .iter()
        .filter(|l| l["type"] == "test_case" && l["metadata"]["phase"] == "generate")
        .map(|l| match l["status"].as_str().unwrap() {
            "passed" => '.',
            "failed" => 'F',
            "gave_up" => 'd',
            other => panic!("{other}"),
        })
        .collect();
    assert_eq!(planned, verdicts);
    assert!(verdicts.contains('.') && verdicts.contains('F') && verdicts.contains('d'));
    assert!(lines.iter().any(|l| l["metadata"]["phase"] == "shrink"));
    assert_eq!(lines.iter().filter(|l| l["type"] == "info").count(), 1);
    let first = &lines[0];
    assert_eq!(first["metadata"]["seed"], receipt["attempted_seeds"][0]);
    assert!(first["arguments"]["x"].is_u64(), "{first}");
}
