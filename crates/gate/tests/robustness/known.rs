//! Disagreements this campaign found between the product and the oracle, reported to the
//! product's owners and tolerated here only in the exact shape reported, so that the
//! campaign stays a gate for everything else. Every one is fail-closed except where marked.
//! A tolerated case is counted and printed in every run (`known: ...` in the notes);
//! `SEEDLEDGER_FUZZ_STRICT=1` turns them back into findings. When the product is fixed,
//! delete the entry: the campaign then holds the fix in place.

use crate::json::{self, Facts, Read};
use crate::oracle::Close;

/// One reported disagreement.
#[derive(Debug)]
pub struct Known {
    pub name: &'static str,
}

/// A repeated key read before text that serde_json skims as valid but the oracle does not
/// accept as JSON (a number beyond a double's range after the repeated key): the product
/// closes the receipt as `incomplete_fields` (exit 1); SPEC: "A file that is not JSON at all
/// is an input error". A plain syntax error after a repeated key is an input error (fixed).
pub const REPEAT_BEFORE_SYNTAX_ERROR: Known = Known {
    name: "a repeated key before a syntax error closes as incomplete_fields, not as an input error",
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
    if facts.max_depth == 128 {
        out.push((Close::Status("incomplete_fields"), &DEPTH_128));
    }
    out
}

/// Why the product may find a witness line unreadable (no row, no id) that the oracle
/// reads.
pub fn unreadable_line(line: &[u8]) -> Option<&'static Known> {
    let facts: Facts = json::read_with_facts(line).1;
    (facts.max_depth == 128).then_some(&DEPTH_128)
}

/// Each known disagreement on its smallest example: the oracle's answer, and the product's
/// different one. When the product is fixed this test fails: delete the entry above (and its
/// example here), and the campaign holds the fix.
#[test]
fn every_known_disagreement_still_occurs() {
    use crate::oracle;
    use seedledger_gate::close_ledger_bytes;

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
        r#"{"stopped_early": true, "stopped_early": false, "x": 1.8e308}"#,
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

    assert_eq!(still.len(), 3);
}
