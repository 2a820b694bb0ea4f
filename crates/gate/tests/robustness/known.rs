//! Disagreements this campaign found between the product and the oracle, reported to the
//! product's owners and tolerated here only in the exact shape reported, so that the
//! campaign stays a gate for everything else. Every one is fail-closed except where marked.
//! A tolerated case is counted and printed in every run (`known: ...` in the notes);
//! `SEEDLEDGER_FUZZ_STRICT=1` turns them back into findings. When the product is fixed,
//! delete the entry: the campaign then holds the fix in place.

use crate::json::{self, Facts, Json, Read};
use crate::oracle::Close;

/// One reported disagreement.
#[derive(Debug)]
pub struct Known {
    pub name: &'static str,
}

/// A repeated key read before a syntax error: the product stops at the repeated key and
/// closes the receipt as `incomplete_fields` (exit 1); SPEC: "A file that is not JSON at
/// all is an input error (exit 2, naming the file and position)".
pub const REPEAT_BEFORE_SYNTAX_ERROR: Known = Known {
    name: "a repeated key before a syntax error closes as incomplete_fields, not as an input error",
};

/// serde_json's default float parser is not correctly rounded at the top of the range:
/// numbers that round to the largest finite double (e.g. `1.7976931348623158e308`) are
/// "number out of range", so the product calls valid JSON "not JSON" (a receipt is an input
/// error, a row is `malformed witness line N`).
pub const LARGEST_DOUBLE: Known = Known {
    name: "a number rounding to the largest double is not JSON",
};

/// The readers' bound is documented as "nested more than 128 levels deep"
/// (`ParseError::TooDeep`), but 128 levels are already refused.
pub const DEPTH_128: Known = Known {
    name: "128 levels of nesting are refused (documented as more than 128)",
};

/// Past the depth bound the product checks syntax only, so a lone surrogate or an
/// out-of-range number after that point makes the text "too deep" (`incomplete_fields`)
/// instead of not JSON.
pub const DEEP_THEN_NOT_IJSON: Known = Known {
    name: "too deep before a lone surrogate or a huge number closes as incomplete_fields, not as an input error",
};

/// A row naming two different `witness_id`s is `malformed witness <the last one>`: the
/// product takes the id from a last-wins parse, the very reading SPEC's "Duplicate keys"
/// rules out. The oracle names the line ("name its line when it has no id").
pub const LAST_OF_TWO_IDS: Known = Known {
    name: "a row with two different ids is named by the last one",
};

/// FAIL-OPEN (mild): citation times are trimmed before they are parsed, so
/// `" 2030-01-01T00:00:00Z"` (or with any Unicode whitespace around it) is accepted as
/// RFC 3339.
pub const PADDED_TIME: Known = Known {
    name: "FAIL-OPEN citation time with whitespace around it accepted",
};

/// FAIL-OPEN: a citation with `same_seed_review: "passed"` and no `seed` is accepted; SPEC
/// "Same-seed review": the citation "names that pair (`fail_id`, `pass_id`, `seed`)".
pub const PASSED_WITHOUT_SEED: Known = Known {
    name: "FAIL-OPEN citation with a passed same-seed review and no seed accepted",
};

/// Whether known disagreements are findings after all.
pub fn strict() -> bool {
    std::env::var("SEEDLEDGER_FUZZ_STRICT").is_ok_and(|v| v == "1")
}

/// Answers the product may give for a receipt's bytes besides the oracle's, and why.
pub fn close_alternatives(bytes: &[u8]) -> Vec<(Close, &'static Known)> {
    let (read, facts) = json::read_with_facts(bytes);
    let mut out = Vec::new();
    if let Read::NotJson(why, _) = read {
        if facts.repeated_key {
            out.push((
                Close::Status("incomplete_fields"),
                &REPEAT_BEFORE_SYNTAX_ERROR,
            ));
        }
        if facts.max_depth >= 128 && (why.contains("surrogate") || why.contains("double's range")) {
            out.push((Close::Status("incomplete_fields"), &DEEP_THEN_NOT_IJSON));
        }
    }
    if facts.largest_double {
        out.push((Close::NotJson, &LARGEST_DOUBLE));
    }
    if facts.max_depth == 128 {
        out.push((Close::Status("incomplete_fields"), &DEPTH_128));
    }
    out
}

/// Why the product may find a witness line unreadable (no row, no id) that the oracle
/// reads.
pub fn unreadable_line(line: &[u8]) -> Option<&'static Known> {
    let facts: Facts = json::read_with_facts(line).1;
    if facts.max_depth == 128 {
        Some(&DEPTH_128)
    } else if facts.largest_double {
        Some(&LARGEST_DOUBLE)
    } else {
        None
    }
}

/// The id the product may give a row that names different `witness_id`s: the last.
pub fn last_of_two_ids(line: &[u8]) -> Option<String> {
    let Read::Doc(doc) = json::read(line) else {
        return None;
    };
    let ids: Vec<&Json> = doc.members("witness_id").collect();
    let texts: Vec<Option<&str>> = ids.iter().map(|v| v.text()).collect();
    if texts.len() < 2 || texts.windows(2).all(|w| w[0] == w[1]) {
        return None;
    }
    texts
        .last()
        .copied()
        .flatten()
        .filter(|s| !s.is_empty())
        .map(str::to_string)
}

/// Which known leniency of the citation reader explains an acceptance the oracle refuses:
/// the oracle accepts the citation once its times are trimmed and a passed review without a
/// seed is read as waived.
pub fn citation_leniency(text: &str) -> Option<&'static Known> {
    let Read::Doc(mut doc) = json::read(text.as_bytes()) else {
        return None;
    };
    let mut used: Vec<&'static Known> = Vec::new();
    let seedless = matches!(doc.get("seed"), None | Some(Json::Null));
    if seedless && doc.get("same_seed_review").and_then(Json::text) == Some("passed") {
        doc.set("same_seed_review", Json::Str("waived".into()));
        used.push(&PASSED_WITHOUT_SEED);
    }
    for key in ["expires_at", "written_at"] {
        if let Some(Json::Str(t)) = doc.get(key)
            && t.trim() != t
        {
            let trimmed = t.trim().to_string();
            doc.set(key, Json::Str(trimmed));
            used.push(&PADDED_TIME);
        }
    }
    let used = *used.first()?;
    crate::oracle::citation(&json::plain(&doc))
        .ok()
        .map(|_| used)
}

/// Each known disagreement on its smallest example: the oracle's answer, and the product's
/// different one. When the product is fixed this test fails: delete the entry above (and its
/// example here), and the campaign holds the fix.
#[test]
fn every_known_disagreement_still_occurs() {
    use crate::oracle;
    use seedledger_format::Citation;
    use seedledger_gate::{Expected, close_ledger_bytes, decide_freeze, witness_lines_from_bytes};

    let close = |text: &str| match close_ledger_bytes(text.as_bytes()) {
        Ok(c) => Close::Status(c.status.as_str()),
        Err(_) => Close::NotJson,
    };
    let eligible = |ext: &str| {
        format!(
            r#"{{"planned_seeds":[1101],"attempted_seeds":[1101],"failing_seed":1101,"stopped_early":false,"shrink_stable":true,"oracle_source":"human_reviewed","fixture_hash":"sha256:{}","x":{ext}}}"#,
            "a".repeat(64)
        )
    };
    let mut still = Vec::new();
    let mut check = |k: &Known, oracle_says: Close, product_says: Close, text: &str| {
        assert_eq!(
            oracle::close(text.as_bytes()),
            oracle_says,
            "oracle: {}",
            k.name
        );
        let got = close(text);
        assert_ne!(
            got, oracle_says,
            "fixed: {}: delete it from known.rs",
            k.name
        );
        assert_eq!(got, product_says, "{}", k.name);
        still.push(k.name);
    };
    check(
        &REPEAT_BEFORE_SYNTAX_ERROR,
        Close::NotJson,
        Close::Status("incomplete_fields"),
        r#"{"stopped_early": true, "stopped_early": false"#,
    );
    check(
        &LARGEST_DOUBLE,
        Close::Status("freeze_eligible"),
        Close::NotJson,
        &eligible("1.7976931348623158e308"),
    );
    let nest = |n: usize, inner: &str| format!("{}{inner}{}", "[".repeat(n), "]".repeat(n));
    check(
        &DEPTH_128,
        Close::Status("freeze_eligible"),
        Close::Status("incomplete_fields"),
        &eligible(&nest(127, "")),
    );
    check(
        &DEEP_THEN_NOT_IJSON,
        Close::NotJson,
        Close::Status("incomplete_fields"),
        &eligible(&nest(200, r#""\ud800""#)),
    );

    // A row that names two ids.
    let row = r#"{"witness_id":"w-x","witness_id":"w-y","property_id":"p","property_digest":"d","fixture_pin":"f","bound":"b","seed":1,"verdict":"pass","signature":"ok","runner":"local","freeze_writer":false}"#;
    let e = Expected {
        property_id: "p".into(),
        digest: "d".into(),
        pin: "f".into(),
        bound: "b".into(),
    };
    let o = oracle::Expect {
        property_id: "p".into(),
        digest: "d".into(),
        pin: "f".into(),
        bound: "b".into(),
    };
    assert_eq!(
        oracle::decide(row.as_bytes(), &o).reason,
        "malformed witness line 1"
    );
    let got = decide_freeze(&witness_lines_from_bytes(row.as_bytes()), &e).reason;
    assert_eq!(
        got, "malformed witness w-y",
        "fixed: {}: delete it from known.rs",
        LAST_OF_TWO_IDS.name
    );

    // Citations the product accepts and the oracle refuses.
    let citation = |time: &str, seed: &str| {
        format!(
            r#"{{"schema_version":2,"patch_id":"pr-7","property_id":"p","property_digest":"{d}","fixture_pin":"{d}","bound":"b","signature":"s","fail_id":"f","pass_id":"q",{seed}"same_seed_review":"passed","code":"c","expires_at":"{time}","written_at":"2030-01-01T00:00:00Z"}}"#,
            d = "d".repeat(64)
        )
    };
    for (k, text) in [
        (
            &PADDED_TIME,
            citation(" 2030-01-01T00:00:00Z", r#""seed":1102,"#),
        ),
        (&PASSED_WITHOUT_SEED, citation("2030-01-01T00:00:00Z", "")),
    ] {
        assert!(oracle::citation(&text).is_err(), "oracle: {}", k.name);
        assert!(
            Citation::parse(&text).is_ok(),
            "fixed: {}: delete it from known.rs",
            k.name
        );
        assert_eq!(citation_leniency(&text).map(|it| it.name), Some(k.name));
    }
    assert_eq!(still.len(), 4);
}
