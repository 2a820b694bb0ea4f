//! Fixed cases: every example and table row the seed documents state
//! (`000_e60a9fb1407a7065.txt`, the seed ledger; `004_c916ff9fe6e58311.txt`, the citation
//! rule), SPEC's own examples, the oracle's readings of JSON, and signed citations'
//! canonical bytes, file name and standings written out by hand. Each case is checked
//! against a literal, both for the oracle and for the product: the oracle must be right
//! before its disagreements mean anything.

use crate::json::{self, Json, Read};
use crate::oracle::{self, Close};
use seedledger_gate::{Expected, close_ledger_bytes, decide_freeze, witness_lines_from_bytes};

/// The pin the fixed cases use (any 64 lowercase hex digits).
const HASH: &str = "sha256:9c1e0c6dbd7d2a1b52f3c8a6e7f09b4d1c2e3f405162738495a6b7c8d9e0f1a2";

/// Checks that the oracle and the product both close `text` as `status` ("not JSON" for
/// an input error).
fn check_close(name: &str, text: &str, status: &str) {
    let want = match status {
        "not JSON" => Close::NotJson,
        s => Close::Status(
            oracle::STATUSES
                .into_iter()
                .find(|it| *it == s)
                .unwrap_or("?"),
        ),
    };
    assert_eq!(
        oracle::close(text.as_bytes()),
        want,
        "oracle: {name}\n{text}"
    );
    let got = match close_ledger_bytes(text.as_bytes()) {
        Ok(c) => c.status.as_str().to_string(),
        Err(_) => "not JSON".to_string(),
    };
    assert_eq!(got, status, "product: {name}\n{text}");
}

/// A receipt with the seed document's field order; `None` leaves a field out.
#[allow(clippy::too_many_arguments)]
fn receipt(
    planned: &str,
    attempted: &str,
    failing: Option<&str>,
    shrink_stable: &str,
    fixture_hash: &str,
    stopped_early: &str,
    oracle_source: &str,
) -> String {
    let failing = failing.map_or(String::new(), |f| format!("\n  \"failing_seed\": {f},"));
    format!(
        "{{\n  \"patch_id\": \"agent-1842\",\n  \"property_id\": \"prop_balance_non_negative\",\n  \"planned_seeds\": {planned},\n  \"attempted_seeds\": {attempted},{failing}\n  \"shrink_stable\": {shrink_stable},\n  \"fixture_hash\": {fixture_hash},\n  \"stopped_early\": {stopped_early},\n  \"oracle_source\": {oracle_source}\n}}\n"
    )
}

const PLAN: &str = "[1101, 1102, 1103, 1104]";
const HUMAN: &str = "\"human_reviewed\"";
const DRAFT: &str = "\"model_draft\"";

fn hash() -> String {
    format!("\"{HASH}\"")
}

/// The seed ledger's "Receipt shape", verbatim. Its hash is "illustrative rather than
/// computed", and SPEC row 9 asks for 64 hex digits after `sha256:` (the document's own
/// checker only looks at the prefix; SPEC is the contract): `fixture_unbound`.
#[test]
fn seed_ledger_receipt_shape_is_fixture_unbound_under_spec_row_9() {
    let text = r#"{
  "patch_id": "agent-1842",
  "property_id": "prop_balance_non_negative",
  "planned_seeds": [1101, 1102, 1103, 1104],
  "attempted_seeds": [1101, 1102, 1103, 1104],
  "failing_seed": 1103,
  "shrink_stable": true,
  "fixture_hash": "sha256:9c1e",
  "stopped_early": false,
  "oracle_source": "human_reviewed"
}"#;
    check_close("receipt shape", text, "fixture_unbound");
    // The same receipt with a real pin is the table's first row.
    check_close(
        "receipt shape, real pin",
        &text.replace("sha256:9c1e", HASH),
        "freeze_eligible",
    );
}

/// The seed ledger's decision table, row by row; "any" columns take every value.
#[test]
fn seed_ledger_decision_table() {
    let bools = ["true", "false"];
    let oracles = [HUMAN, DRAFT];
    // equal, failing seed present | false | true | human_reviewed | freeze eligible
    check_close(
        "row 1: freeze eligible",
        &receipt(PLAN, PLAN, Some("1103"), "true", &hash(), "false", HUMAN),
        "freeze_eligible",
    );
    // attempted shorter | true | any | any | incomplete, no freeze
    for stable in bools {
        for source in oracles {
            check_close(
                "row 2: attempted shorter, stopped early",
                &receipt(
                    PLAN,
                    "[1101, 1102]",
                    Some("1102"),
                    stable,
                    &hash(),
                    "true",
                    source,
                ),
                "early_stop_incomplete",
            );
        }
    }
    // failing seed absent from attempts | false | any | any | harness gap, no freeze
    for stable in bools {
        for source in oracles {
            check_close(
                "row 3: failing seed absent from attempts",
                &receipt(PLAN, PLAN, Some("1105"), stable, &hash(), "false", source),
                "seed_mismatch",
            );
        }
    }
    // equal | false | false | human_reviewed | shrink open, no freeze
    check_close(
        "row 4: shrink open",
        &receipt(PLAN, PLAN, Some("1103"), "false", &hash(), "false", HUMAN),
        "shrink_unstable",
    );
    // equal | false | true | model_draft | oracle unreviewed, no freeze
    check_close(
        "row 5: oracle unreviewed",
        &receipt(PLAN, PLAN, Some("1103"), "true", &hash(), "false", DRAFT),
        "oracle_unreviewed",
    );
    // equal, no failing seed | false | n/a | human_reviewed | budget pass, no freeze
    for stable in bools {
        for failing in [Some("null"), None] {
            check_close(
                "row 6: budget pass",
                &receipt(PLAN, PLAN, failing, stable, &hash(), "false", HUMAN),
                "budget_pass_no_freeze",
            );
        }
    }
}

/// The seed ledger's prose and its proposed checker and negative test.
#[test]
fn seed_ledger_prose_checker_and_negative_test() {
    // "Suppose the plan is seeds 1101 through 1104, and seed 1102 fails. A runner that
    // exits there has attempted two of four seeds ... stopped_early set to true."
    check_close(
        "exit on the first counterexample",
        &receipt(
            PLAN,
            "[1101, 1102]",
            Some("1102"),
            "true",
            &hash(),
            "true",
            HUMAN,
        ),
        "early_stop_incomplete",
    );
    // "Only a later run that attempts all four can move that same failing seed toward
    // eligibility, and only if shrink is stable."
    check_close(
        "the later full run, shrink stable",
        &receipt(PLAN, PLAN, Some("1102"), "true", &hash(), "false", HUMAN),
        "freeze_eligible",
    );
    check_close(
        "the later full run, shrink unstable",
        &receipt(PLAN, PLAN, Some("1102"), "false", &hash(), "false", HUMAN),
        "shrink_unstable",
    );
    // Close procedure step 2: no seeds appended after a failure, none dropped.
    check_close(
        "a seed appended",
        &receipt(
            PLAN,
            "[1101, 1102, 1103, 1104, 1105]",
            Some("1102"),
            "true",
            &hash(),
            "false",
            HUMAN,
        ),
        "seed_gap",
    );
    check_close(
        "a seed dropped",
        &receipt(
            PLAN,
            "[1101, 1102, 1104]",
            Some("1102"),
            "true",
            &hash(),
            "false",
            HUMAN,
        ),
        "seed_gap",
    );
    check_close(
        "attempted in another order",
        &receipt(
            PLAN,
            "[1102, 1101, 1103, 1104]",
            Some("1102"),
            "true",
            &hash(),
            "false",
            HUMAN,
        ),
        "seed_gap",
    );
    // Step 4: "A failure with no seed id is a harness defect, not a flake" (a failing seed
    // of the wrong type is a missing field, SPEC decision 1).
    check_close(
        "failing seed without an id",
        &receipt(PLAN, PLAN, Some("\"\""), "true", &hash(), "false", HUMAN),
        "incomplete_fields",
    );
    // The proposed checker fails closed on missing fields and on an empty plan.
    let full = receipt(PLAN, PLAN, Some("1103"), "true", &hash(), "false", HUMAN);
    for key in [
        "planned_seeds",
        "attempted_seeds",
        "stopped_early",
        "shrink_stable",
        "oracle_source",
        "fixture_hash",
    ] {
        let Read::Doc(mut doc) = json::read(full.as_bytes()) else {
            panic!("the fixed receipt is JSON");
        };
        doc.remove(key);
        check_close(
            &format!("{key} missing"),
            &json::plain(&doc),
            "incomplete_fields",
        );
        doc.set(key, Json::Null);
        check_close(
            &format!("{key} null"),
            &json::plain(&doc),
            "incomplete_fields",
        );
        doc.set(key, Json::Str(String::new()));
        check_close(
            &format!("{key} empty"),
            &json::plain(&doc),
            "incomplete_fields",
        );
    }
    check_close(
        "empty plan",
        &receipt("[]", "[]", None, "false", &hash(), "false", HUMAN),
        "empty_plan",
    );
    // test_partial_plan_cannot_freeze, verbatim.
    check_close(
        "test_partial_plan_cannot_freeze",
        r#"{
        "planned_seeds": [1, 2, 3, 4],
        "attempted_seeds": [1, 2],
        "failing_seed": 2,
        "stopped_early": true,
        "shrink_stable": false,
        "oracle_source": "human_reviewed",
        "fixture_hash": "sha256:abc"
    }"#,
        "early_stop_incomplete",
    );
}

/// SPEC "Gate decision 1": what a seed is, what missing means, and repeated keys.
#[test]
fn spec_decision_1_readings() {
    let with = |failing: &str, planned: &str| {
        receipt(
            planned,
            planned,
            Some(failing),
            "true",
            &hash(),
            "false",
            HUMAN,
        )
    };
    for not_a_seed in [
        "1101.0",
        "\"1101\"",
        "-1",
        "18446744073709551616",
        "1.101e3",
        "-0",
        "true",
        "[1101]",
    ] {
        check_close(
            &format!("failing_seed {not_a_seed}"),
            &with(not_a_seed, "[1101]"),
            "incomplete_fields",
        );
        check_close(
            &format!("planned seed {not_a_seed}"),
            &with("1101", &format!("[1101, {not_a_seed}]")),
            "incomplete_fields",
        );
    }
    check_close(
        "the largest seed",
        &with("18446744073709551615", "[18446744073709551615]"),
        "freeze_eligible",
    );
    check_close("seed 0", &with("0", "[0]"), "freeze_eligible");
    let eligible = with("1101", "[1101]");
    // Identity fields are not needed; unknown fields are ignored.
    check_close(
        "no identity fields, unknown fields",
        &eligible
            .replace(
                "\"patch_id\": \"agent-1842\",",
                "\"x\": {\"stopped_early\": true},",
            )
            .replace("\"property_id\": \"prop_balance_non_negative\",", ""),
        "freeze_eligible",
    );
    // "a JSON value that is not an object is incomplete_fields"; not JSON is an input error.
    for not_an_object in ["[]", "null", "1101", "\"receipt\"", "true"] {
        check_close(not_an_object, not_an_object, "incomplete_fields");
    }
    for not_json in [
        "",
        "{",
        "{\"planned_seeds\": [1101,]}",
        "\u{feff}{}",
        "{} x",
        "{'a': 1}",
    ] {
        check_close(not_json, not_json, "not JSON");
    }
    // SPEC "Duplicate keys", and issue 8's example of what last-wins parsers let through.
    check_close(
        "stopped_early twice",
        &eligible.replace(
            "\"stopped_early\": false",
            "\"stopped_early\": true, \"stopped_early\": false",
        ),
        "incomplete_fields",
    );
    check_close(
        "a key repeated in an extension",
        &eligible.replace(
            "\"patch_id\"",
            "\"ext\": {\"a\": 1, \"a\": 1}, \"patch_id\"",
        ),
        "incomplete_fields",
    );
    check_close(
        "a key repeated under another spelling",
        &eligible.replace(
            "\"stopped_early\": false",
            "\"stopped_early\": false, \"stopped\\u005fearly\": false",
        ),
        "incomplete_fields",
    );
    check_close(
        "an escaped spelling is the same key",
        &eligible.replace("\"stopped_early\"", "\"stopped\\u005fearly\""),
        "freeze_eligible",
    );
}

// ---------------------------------------------------------------------------------------
// Gate decision 2.

fn expected(digest: &str, pin: &str) -> (Expected, oracle::Expect) {
    (
        Expected {
            property_id: "order_total_nonneg".into(),
            digest: digest.into(),
            pin: pin.into(),
            bound: "total>=0".into(),
        },
        oracle::Expect {
            property_id: "order_total_nonneg".into(),
            digest: digest.into(),
            pin: pin.into(),
            bound: "total>=0".into(),
        },
    )
}

/// A row shaped like the citation rule's `common` fields (`d`*64, `p`*64, seed 17).
fn row(id: &str, verdict: &str, signature: &str, runner: &str) -> String {
    row_with(id, verdict, signature, runner, 17, false)
}

fn row_with(
    id: &str,
    verdict: &str,
    signature: &str,
    runner: &str,
    seed: u64,
    freeze_writer: bool,
) -> String {
    format!(
        "{{\"witness_id\":\"{id}\",\"property_id\":\"order_total_nonneg\",\"property_digest\":\"{}\",\"fixture_pin\":\"{}\",\"bound\":\"total>=0\",\"seed\":{seed},\"verdict\":\"{verdict}\",\"signature\":\"{signature}\",\"runner\":\"{runner}\",\"freeze_writer\":{freeze_writer}}}",
        "d".repeat(64),
        "p".repeat(64)
    )
}

/// Checks that the oracle and the product both decide the JSON Lines `rows` (joined by
/// newlines) with `reason` and, on admit, `ids`.
fn check_decide(name: &str, rows: &[String], reason: &str, ids: Option<(&str, &str)>) {
    let text: String = rows.iter().map(|r| format!("{r}\n")).collect();
    check_decide_text(
        name,
        &text,
        ("d".repeat(64).as_str(), "p".repeat(64).as_str()),
        reason,
        ids,
    );
}

fn check_decide_text(
    name: &str,
    text: &str,
    (digest, pin): (&str, &str),
    reason: &str,
    ids: Option<(&str, &str)>,
) {
    let (e, o) = expected(digest, pin);
    let want = oracle::decide(text.as_bytes(), &o);
    let id = |x: &Option<String>| x.clone();
    assert_eq!(want.reason, reason, "oracle: {name}\n{text}");
    assert_eq!(
        (id(&want.fail_id), id(&want.pass_id)),
        ids.map_or((None, None), |(f, p)| (
            Some(f.to_string()),
            Some(p.to_string())
        )),
        "oracle: {name}"
    );
    let d = decide_freeze(&witness_lines_from_bytes(text.as_bytes()), &e);
    assert_eq!(d.reason, reason, "product: {name}: {}\n{text}", d.detail);
    assert_eq!(d.admit, ids.is_some(), "product: {name}");
    assert_eq!(
        (d.fail_id, d.pass_id),
        (want.fail_id, want.pass_id),
        "product: {name}"
    );
}

/// The citation rule's three checks (`ok_rows`, `mint_attempt`, `split_sig`).
#[test]
fn citation_rule_reference_checks() {
    let ok_rows = [
        row("w-local-1", "fail", "AssertionError", "local"),
        row("w-remote-9", "pass", "ok", "remote"),
    ];
    check_decide(
        "ok_rows",
        &ok_rows,
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-9")),
    );
    let mint_attempt = [
        ok_rows[0].clone(),
        row_with("w-remote-bad", "pass", "ok", "remote", 17, true),
    ];
    check_decide(
        "mint_attempt",
        &mint_attempt,
        "remote witness w-remote-bad attempted to mint",
        None,
    );
    let mut split_sig = ok_rows.to_vec();
    split_sig.push(row("w-local-2", "fail", "KeyError", "local"));
    check_decide(
        "split_sig",
        &split_sig,
        "fail signature is not stable",
        None,
    );
}

/// The citation rule's two JSON Lines rows, verbatim. Their digest and pin are placeholders:
/// decided against values computed from real files they are out of scope; decided against
/// the placeholders themselves (the gate does not check the hex shape) they admit.
#[test]
fn citation_rule_example_rows() {
    let text = r#"{"witness_id":"w-local-1","property_id":"order_total_nonneg","property_digest":"<spec-sha256>","fixture_pin":"<pin-sha256>","bound":"total>=0","seed":17,"verdict":"fail","signature":"AssertionError","runner":"local","freeze_writer":false}
{"witness_id":"w-remote-9","property_id":"order_total_nonneg","property_digest":"<spec-sha256>","fixture_pin":"<pin-sha256>","bound":"total>=0","seed":17,"verdict":"pass","signature":"ok","runner":"remote","freeze_writer":false}
"#;
    check_decide_text(
        "placeholders against computed values",
        text,
        (&"d".repeat(64), &"p".repeat(64)),
        "need two witnesses on the same pin, digest, and bound",
        None,
    );
    check_decide_text(
        "placeholders against themselves",
        text,
        ("<spec-sha256>", "<pin-sha256>"),
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-9")),
    );
}

/// The citation rule's "How to act on each reason", its prose, and SPEC rule 1's
/// malformed rows: one case per reason.
#[test]
fn citation_rule_reasons() {
    let local_fail = row("w-local-1", "fail", "AssertionError", "local");
    let remote_pass = row("w-remote-9", "pass", "ok", "remote");
    // 1. "A remote row that sets freeze_writer to true fails the batch even when every
    //    other field matches. Do not drop the bad row and continue."
    check_decide(
        "a mint attempt after an admissible pair",
        &[
            local_fail.clone(),
            remote_pass.clone(),
            row_with("w-remote-2", "pass", "ok", "remote", 17, true),
        ],
        "remote witness w-remote-2 attempted to mint",
        None,
    );
    // 2. malformed witness: the collector schema drifted.
    check_decide(
        "a runner that is neither",
        &[local_fail.clone(), row("w-cloud", "pass", "ok", "cloud")],
        "malformed witness w-cloud",
        None,
    );
    check_decide(
        "a verdict that is neither",
        &[local_fail.clone(), row("w-flaky", "flaky", "ok", "remote")],
        "malformed witness w-flaky",
        None,
    );
    check_decide(
        "a line that is not JSON is named by its line",
        &[
            local_fail.clone(),
            "not json".to_string(),
            remote_pass.clone(),
        ],
        "malformed witness line 2",
        None,
    );
    // "Skip the gate when failures have no stable signature, including timeouts that
    // record an empty error string": an empty signature is a missing field.
    check_decide(
        "a fail with an empty signature",
        &[row("w-timeout", "fail", "", "local"), remote_pass.clone()],
        "malformed witness w-timeout",
        None,
    );
    // SPEC "Duplicate keys": the remote row with freeze_writer twice.
    check_decide(
        "freeze_writer twice",
        &[
            local_fail.clone(),
            remote_pass.replace(
                "\"freeze_writer\":false",
                "\"freeze_writer\":true,\"freeze_writer\":false",
            ),
        ],
        "malformed witness w-remote-9",
        None,
    );
    // 3. need two witnesses: the pin, digest or bound did not line up.
    check_decide(
        "one row",
        std::slice::from_ref(&local_fail),
        "need two witnesses on the same pin, digest, and bound",
        None,
    );
    check_decide(
        "the pass on another pin",
        &[
            local_fail.clone(),
            remote_pass.replace(&"p".repeat(64), &"e".repeat(64)),
        ],
        "need two witnesses on the same pin, digest, and bound",
        None,
    );
    check_decide(
        "an empty batch",
        &[],
        "need two witnesses on the same pin, digest, and bound",
        None,
    );
    // 4. opposite verdicts: "a fail you reproduced twice on the same pin, with the same
    //    signature, and with no passing witness".
    check_decide(
        "a consistent fail",
        &[
            local_fail.clone(),
            row("w-remote-3", "fail", "AssertionError", "remote"),
        ],
        "opposite verdicts required",
        None,
    );
    // 5. fail signature is not stable: "A change from AssertionError to KeyError".
    check_decide(
        "two failure modes",
        &[
            local_fail.clone(),
            remote_pass.clone(),
            row("w-remote-4", "fail", "KeyError", "remote"),
        ],
        "fail signature is not stable",
        None,
    );
    // 6. need both runners: "do not let the local runner impersonate both roles".
    check_decide(
        "local only",
        &[local_fail.clone(), row("w-local-2", "pass", "ok", "local")],
        "need both a local witness and a remote witness",
        None,
    );
    // SPEC rule 6.
    check_decide(
        "a fail signed ok",
        &[row("w-local-1", "fail", "ok", "local"), remote_pass.clone()],
        "fail witness cannot carry an ok signature",
        None,
    );
    // 7. admit; "The pair rule does not require equal seeds."
    check_decide(
        "different seeds",
        &[
            row_with("w-local-1", "fail", "AssertionError", "local", 1102, false),
            row_with("w-remote-9", "pass", "ok", "remote", 1101, false),
        ],
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-9")),
    );
}

// ---------------------------------------------------------------------------------------
// The oracle's own readings, pinned.

#[test]
fn the_oracle_reads_json_as_its_header_says() {
    let doc = |t: &str| match json::read(t.as_bytes()) {
        Read::Doc(d) => d,
        other => panic!("{t}: {other:?}"),
    };
    // Repeated keys stay visible, at any depth, under any spelling.
    assert!(doc(r#"{"a":1,"a":1}"#).repeats_a_key());
    assert!(doc(r#"[{"b":{"a":1,"\u0061":2}}]"#).repeats_a_key());
    assert!(!doc(r#"{"a":{"a":1}}"#).repeats_a_key());
    // Numbers keep how they were written.
    assert_eq!(doc("1101").seed(), Some(1101));
    assert_eq!(doc("18446744073709551615").seed(), Some(u64::MAX));
    for not_a_seed in [
        "1101.0",
        "-1",
        "-0",
        "\"1101\"",
        "18446744073709551616",
        "1e3",
        "null",
    ] {
        assert_eq!(doc(not_a_seed).seed(), None, "{not_a_seed}");
    }
    assert_eq!(doc("\"a\\u00e9\\ud83d\\ude00\\/\"").text(), Some("aé😀/"));
    for not_json in [
        "",
        " ",
        "\u{feff}1",
        "\u{a0}1",
        "1 2",
        "01",
        "1.",
        "-",
        "1e",
        "[1,]",
        "{\"a\"}",
        "{1:2}",
        "\"\\ud800\"",
        "\"\\udc00\"",
        "\"\\ud800\\u0041\"",
        "\"\t\"",
        "\"\\x\"",
        "1e400",
        "-1e309",
        "tru",
        "[",
    ] {
        assert!(
            matches!(json::read(not_json.as_bytes()), Read::NotJson(..)),
            "{not_json:?}"
        );
    }
    assert!(matches!(json::read(b"\"\xff\""), Read::NotJson(..)));
    assert!(matches!(json::read(b"1e-400"), Read::Doc(_)));
    assert!(matches!(json::read(b" \t\r\n1\n"), Read::Doc(_)));
    // The depth bound: 128 levels are read, 129 are too deep, deep garbage is not JSON.
    let nest = |n: usize| format!("{}{}", "[".repeat(n), "]".repeat(n));
    assert!(matches!(json::read(nest(128).as_bytes()), Read::Doc(_)));
    assert_eq!(json::read(nest(129).as_bytes()), Read::TooDeep);
    assert_eq!(json::read(nest(200_000).as_bytes()), Read::TooDeep);
    let objects = format!("{}1{}", "{\"a\":".repeat(300), "}".repeat(300));
    assert_eq!(json::read(objects.as_bytes()), Read::TooDeep);
    assert!(matches!(
        json::read("[".repeat(300).as_bytes()),
        Read::NotJson(..)
    ));
    let deep_bad = format!("{}\"\\ud800\"{}", "[".repeat(300), "]".repeat(300));
    assert!(matches!(json::read(deep_bad.as_bytes()), Read::NotJson(..)));
    // The writer's spellings read back as the same document.
    let v = doc(r#"{"k/é":["a\"b",1.5e3,{"x":null}],"t":true}"#);
    assert_eq!(doc(&json::plain(&v)), v);
}

#[test]
fn the_oracle_reads_rfc3339_as_documented() {
    for ok in [
        "2030-01-01T00:00:00Z",
        "2030-01-01t00:00:00z",
        "2030-01-01 00:00:00Z",
        "2030-01-01T00:00:00.123456789Z",
        "2030-01-01T01:00:00+01:00",
        "2030-01-01T01:00:00-00:00",
        "2028-02-29T00:00:00Z",
        "2000-02-29T00:00:00Z",
        "2030-12-31T23:59:60Z",
    ] {
        assert!(oracle::is_rfc3339(ok), "{ok}");
    }
    for bad in [
        "",
        "2030-01-01",
        "2030-01-01T00:00:00",
        "2030-02-29T00:00:00Z",
        "1900-02-29T00:00:00Z",
        "2030-04-31T00:00:00Z",
        "2030-13-01T00:00:00Z",
        "2030-01-01T24:00:00Z",
        "2030-01-01T00:00:61Z",
        "2030-01-01T00:00:00+24:00",
        "2030-01-01T00:00:00+0100",
        "2030-01-01T00:00:00.Z",
        " 2030-01-01T00:00:00Z",
        "2030-01-01T00:00:00Z ",
        "+2030-01-01T00:00:00Z",
    ] {
        assert!(!oracle::is_rfc3339(bad), "{bad}");
    }
}

/// SPEC "Property spec files": its example front matter, and the product reading it the
/// same way.
#[test]
fn spec_front_matter_example() {
    let text = "---\nproperty_id: order_total_nonneg\nbound: total>=0\nfixture: fixtures/order.json\noracle_source: human_reviewed\n---\nProse for reviewers ...\n";
    let front = oracle::spec_file(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        front,
        oracle::Front {
            property_id: "order_total_nonneg".into(),
            bound: "total>=0".into(),
            fixture: "fixtures/order.json".into(),
            oracle_source: "human_reviewed".into(),
        }
    );
    let spec = seedledger_format::SpecFile::parse(text).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(
        (
            spec.property_id.as_str(),
            spec.bound.as_str(),
            spec.fixture.as_str(),
            spec.oracle_source.as_str()
        ),
        (
            "order_total_nonneg",
            "total>=0",
            "fixtures/order.json",
            "human_reviewed"
        )
    );
    for (bad, why) in [
        (
            text.replace("human_reviewed", "robot"),
            "oracle_source is neither value",
        ),
        (text.replace("bound: total>=0\n", ""), "bound"),
        (
            text.replace("bound: total>=0\n", "bound: total>=0\nbound: total>0\n"),
            "a key appears twice",
        ),
        (
            text.replacen("---\nProse for reviewers ...\n", "", 1),
            "no closing fence",
        ),
        (format!("\n{text}"), "no opening fence"),
    ] {
        assert_eq!(oracle::spec_file(&bad), Err(why), "{bad}");
        assert!(seedledger_format::SpecFile::parse(&bad).is_err(), "{bad}");
    }
    // `fixture: none` is a fixture (SPEC: properties without a fixture).
    assert!(oracle::spec_file(&text.replace("fixtures/order.json", "none")).is_ok());
}

/// The oracle's readings of decision 2 where SPEC leaves room (see `oracle::classify`).
#[test]
fn spec_decision_2_readings() {
    let local_fail = row("w-local-1", "fail", "AssertionError", "local");
    let remote_pass = row("w-remote-9", "pass", "ok", "remote");
    // A digest that is not 64 hex is a row out of scope, not a malformed one.
    check_decide(
        "a pass on a digest that is not hex",
        &[
            local_fail.clone(),
            remote_pass.replace(&"d".repeat(64), "dd"),
        ],
        "need two witnesses on the same pin, digest, and bound",
        None,
    );
    // Rule 1 names only runner, verdict, JSON and missing fields: a pass that carries a
    // failure signature is still a pass.
    check_decide(
        "a pass signed like a fail",
        &[
            local_fail.clone(),
            row("w-remote-9", "pass", "AssertionError", "remote"),
        ],
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-9")),
    );
    // A minting row is named as such even when it also lacks fields.
    check_decide(
        "a mint attempt without a verdict",
        &[
            local_fail.clone(),
            row_with("w-remote-2", "pass", "ok", "remote", 17, true)
                .replace("\"verdict\":\"pass\",", ""),
        ],
        "remote witness w-remote-2 attempted to mint",
        None,
    );
    // A repeated id: the later row breaks uniqueness.
    check_decide(
        "an id used twice",
        &[
            local_fail.clone(),
            remote_pass.clone(),
            row("w-local-1", "pass", "ok", "remote"),
        ],
        "malformed witness w-local-1",
        None,
    );
    // "The first fail" and "the first pass" are first in the batch's order, in scope.
    check_decide(
        "first in batch order",
        &[
            row("w-remote-1", "pass", "ok", "remote"),
            local_fail.clone(),
            row("w-local-2", "fail", "AssertionError", "local"),
            remote_pass.clone(),
        ],
        "stable signature across opposite verdicts",
        Some(("w-local-1", "w-remote-1")),
    );
    // Blank lines, in any whitespace, are not rows; line numbers count them.
    check_decide_text(
        "blank lines",
        &format!("\n \t\r\n\u{a0}\n{local_fail}\r\n\n{remote_pass}\nnot json\n"),
        (&"d".repeat(64), &"p".repeat(64)),
        "malformed witness line 7",
        None,
    );
}

// ---------------------------------------------------------------------------------------
// Signed citations (SPEC "Who may cite"): the canonical bytes, the file name and the four
// standings, each against a literal or a signature made here with ed25519-dalek.

/// A citation as `gate cite` writes one (pretty, members in the format's order), unsigned.
const CITATION: &str = r#"{
  "schema_version": 2,
  "patch_id": "pr-7",
  "property_id": "order_total_nonneg",
  "property_digest": "dddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddddd",
  "fixture_pin": "eeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeeee",
  "bound": "total>=0",
  "signature": "assert:quote.total >= 0",
  "fail_id": "local-1-5",
  "pass_id": "remote-2-5",
  "seed": 5,
  "same_seed_review": "passed",
  "code": "diff:x",
  "expires_at": "2030-01-01T00:00:00Z",
  "written_at": "2026-12-01T00:00:00Z"
}
"#;

/// The canonical bytes of a text with every trap of the rule, written out by hand: the
/// top-level `sig` left out but a nested one kept; keys sorted by UTF-8 bytes (`B` < `a\0` <
/// `b` < `schema_version` < `é` < `ﬁ` < `😀`: UTF-16 would put `😀` before `ﬁ`); the escapes
/// serde_json writes and the characters it leaves alone (`/`, DEL, `é`); integers at both
/// ends of the range.
#[test]
fn canonical_bytes_by_hand() {
    let text = "{\"sig\": \"ab\", \"schema_version\": 2,\n \"b\": {\"z\": -9223372036854775808, \"a\": [18446744073709551615, null, true], \"sig\": \"kept\"},\n \"\\u00e9\": \"tab\\there \\\"q\\\" \\\\ \\/ \\u0001 \\u007f\", \"😀\": 0, \"ﬁ\": 1, \"B\": \"\\u00E9\", \"a\\u0000\": false}";
    let want = concat!(
        r#"{"B":"é","a\u0000":false,"b":{"a":[18446744073709551615,null,true],"sig":"kept","z":-9223372036854775808},"#,
        r#""schema_version":2,"é":"tab\there \"q\" \\ / \u0001 "#,
        "\u{7f}",
        r#"","ﬁ":1,"😀":0}"#
    );
    let Read::Doc(doc) = json::read(text.as_bytes()) else {
        panic!("not JSON: {text}");
    };
    let oracle_says = oracle::canonical_without_sig(&doc).map(String::from_utf8);
    assert_eq!(oracle_says, Some(Ok(want.to_string())), "oracle");
    let product_says = seedledger_format::canonical_bytes_without_sig(text).map(String::from_utf8);
    assert_eq!(product_says.ok(), Some(Ok(want.to_string())), "product");
    // Numbers with no canonical form: no bytes to sign, in both.
    for n in [
        "1.5",
        "1e3",
        "100.0",
        "-0",
        "18446744073709551616",
        "-9223372036854775809",
    ] {
        let text = format!("{{\"a\":[{n}]}}");
        let Read::Doc(doc) = json::read(text.as_bytes()) else {
            panic!("not JSON: {text}");
        };
        assert_eq!(oracle::canonical_without_sig(&doc), None, "oracle: {n}");
        assert!(
            seedledger_format::canonical_bytes_without_sig(&text).is_err(),
            "product: {n}"
        );
    }
}

/// The file name of [`CITATION`]: its SHA-256 computed outside this test
/// (`sha256sum`: `b016353e…`).
#[test]
fn citation_file_name_by_hand() {
    let want = "order_total_nonneg.20261201T000000Z.b016353e.json";
    assert_eq!(
        oracle::citation_file_name("order_total_nonneg", "2026-12-01T00:00:00Z", CITATION),
        want,
        "oracle"
    );
    let c = seedledger_format::Citation::parse(CITATION).unwrap();
    assert_eq!(c.file_name(CITATION), want, "product");
    for (id, ok) in [
        ("order.total-nonneg_2", true),
        ("9", true),
        (&"p".repeat(128), true),
        (&"p".repeat(129), false),
        (".x", false),
        ("-x", false),
        ("a/b", false),
        ("é", false),
        ("", false),
    ] {
        assert_eq!(oracle::follows_id_rule(id), ok, "oracle: {id:?}");
        assert_eq!(
            seedledger_format::check_id("property id", id).is_ok(),
            ok,
            "product: {id:?}"
        );
    }
}

/// [`CITATION`] signed by `key` as `key_id`: the signature made here over its canonical
/// bytes as written out by hand.
fn signed_by_hand(key: u8, key_id: &str) -> String {
    use ed25519_dalek::{Signer as _, SigningKey};
    let canonical = format!(
        r#"{{"bound":"total>=0","code":"diff:x","expires_at":"2030-01-01T00:00:00Z","fail_id":"local-1-5","fixture_pin":"{e}","key_id":"{key_id}","pass_id":"remote-2-5","patch_id":"pr-7","property_digest":"{d}","property_id":"order_total_nonneg","same_seed_review":"passed","schema_version":2,"seed":5,"signature":"assert:quote.total >= 0","written_at":"2026-12-01T00:00:00Z"}}"#,
        d = "d".repeat(64),
        e = "e".repeat(64),
    );
    let sig = SigningKey::from_bytes(&[key; 32]).sign(canonical.as_bytes());
    let hex: String = sig.to_bytes().iter().map(|b| format!("{b:02x}")).collect();
    CITATION.replace(
        "\n}\n",
        &format!(",\n  \"key_id\": \"{key_id}\",\n  \"sig\": \"{hex}\"\n}}\n"),
    )
}

/// SPEC "Who may cite", one case per standing: honoured when signed by a declared citer
/// and named after its text; `invalid` when re-spaced under its old name (the signature
/// still verifies), edited and renamed (it does not), signed by a remote key, or unsigned;
/// `unauthenticated` without a trust file.
#[test]
fn who_may_cite_by_hand() {
    use ed25519_dalek::SigningKey;
    use seedledger_gate::{Authenticity, authenticate_citation};
    let declared = [("citer-1", "citer", 1u8), ("remote-ci", "remote", 3u8)];
    let keys: Vec<oracle::TrustKey> = declared
        .iter()
        .map(|(id, role, b)| oracle::TrustKey {
            key_id: id.to_string(),
            role,
            public_key: SigningKey::from_bytes(&[*b; 32]).verifying_key(),
        })
        .collect();
    let trust_text: String = keys
        .iter()
        .map(|k| {
            let hex: String = k
                .public_key
                .to_bytes()
                .iter()
                .map(|b| format!("{b:02x}"))
                .collect();
            format!(
                "{{\"key_id\":\"{}\",\"role\":\"{}\",\"public_key\":\"{hex}\"}}\n",
                k.key_id, k.role
            )
        })
        .collect();
    let trusted = seedledger_format::TrustedKeys::parse(&trust_text).unwrap();
    let name =
        |text: &str| oracle::citation_file_name("order_total_nonneg", "2026-12-01T00:00:00Z", text);
    // `Some(key_id)`: honoured as signed by that citer key; `None`: invalid.
    let check = |what: &str, text: &str, file: &str, want: Option<&str>, rule: &str| {
        let oracle_says = oracle::authenticate(text, file, Some(&keys));
        match want {
            Some(id) => assert_eq!(
                oracle_says.map(|(_, s)| s),
                Ok(oracle::Standing::Signed(id.to_string())),
                "oracle: {what}"
            ),
            None => assert_eq!(
                oracle_says.map(|_| ()).map_err(|r| r.rule),
                Err(rule),
                "oracle: {what}"
            ),
        }
        let product_says = authenticate_citation(text, file, Some(&trusted));
        match want {
            Some(id) => assert_eq!(
                product_says.map(|(_, a)| a),
                Ok(Authenticity::Signed {
                    key_id: id.to_string()
                }),
                "product: {what}"
            ),
            None => assert!(product_says.is_err(), "product: {what}"),
        }
    };
    let text = signed_by_hand(1, "citer-1");
    check(
        "signed by a citer",
        &text,
        &name(&text),
        Some("citer-1"),
        "",
    );
    let spaced = text.replace(": ", ":");
    check(
        "re-spaced, old name",
        &spaced,
        &name(&text),
        None,
        oracle::NAME,
    );
    check(
        "re-spaced, renamed",
        &spaced,
        &name(&spaced),
        Some("citer-1"),
        "",
    );
    let edited = text.replace("2030-01-01T00:00:00Z", "2999-01-01T00:00:00Z");
    check(
        "edited, renamed",
        &edited,
        &name(&edited),
        None,
        oracle::FORGED,
    );
    let remote = signed_by_hand(3, "remote-ci");
    check(
        "signed by a remote key",
        &remote,
        &name(&remote),
        None,
        oracle::NOT_CITER,
    );
    check(
        "unsigned",
        CITATION,
        &name(CITATION),
        None,
        oracle::UNSIGNED,
    );
    // Without a trust file: honoured, unauthenticated, whatever the name.
    assert_eq!(
        oracle::authenticate(&edited, "any.json", None).map(|(_, s)| s),
        Ok(oracle::Standing::Unauthenticated)
    );
    assert_eq!(
        authenticate_citation(&edited, "any.json", None).map(|(_, a)| a),
        Ok(Authenticity::Unauthenticated)
    );
}
