//! The folds against slice-based implementations: randomized batches (malformed lines,
//! minting rows, repeated ids, several files, `\r\n`, invalid UTF-8) decided by the fold, fed
//! line by line through the streaming reader, and by a `decide_freeze` over the whole slice
//! (module `reference`), which must agree on every field.

use super::*;
use crate::review::same_seed_review;
use seedledger_format::{WitnessLineReader, parse_witness_lines};

/// A slice-based `decide_freeze`, the rules applied to the whole batch at once: the
/// reference the fold must agree with.
mod reference {
    use crate::decide::{
        Expected, FreezeDecision, REASON_ADMIT, REASON_NEED_BOTH_RUNNERS, REASON_NEED_TWO,
        REASON_OK_SIGNATURE, REASON_OPPOSITE_VERDICTS, REASON_UNSTABLE_SIGNATURE,
    };
    use seedledger_format::{ParseError, Runner, Verdict, WitnessLine, WitnessRow};
    use std::collections::{BTreeSet, HashSet};

    pub fn decide_freeze(lines: &[WitnessLine], expected: &Expected) -> FreezeDecision {
        let mut seen: HashSet<&str> = HashSet::new();
        let mut rows: Vec<&WitnessRow> = Vec::with_capacity(lines.len());
        for (index, it) in lines.iter().enumerate() {
            let name = || match &it.witness_id {
                Some(id) => id.clone(),
                None => format!("line {}", it.line),
            };
            if it.remote_minting {
                return reject_row(
                    index,
                    format!("remote witness {} attempted to mint", name()),
                    format!(
                        "line {}: runner is `remote` and freeze_writer is true; a remote replay may append witnesses but never mint, so the whole batch is discarded",
                        it.line
                    ),
                );
            }
            let row = match &it.row {
                Ok(row) => row,
                Err(e) => {
                    return reject_row(
                        index,
                        format!("malformed witness {}", name()),
                        row_error(it.line, e),
                    );
                }
            };
            if !seen.insert(row.witness_id.as_str()) {
                return reject_row(
                    index,
                    format!("malformed witness {}", name()),
                    format!(
                        "line {}: witness_id `{}` is already used by an earlier row; ids must be unique",
                        it.line, row.witness_id
                    ),
                );
            }
            rows.push(row);
        }
        decide_scoped(&rows, expected)
    }

    fn decide_scoped(rows: &[&WitnessRow], expected: &Expected) -> FreezeDecision {
        let scope: Vec<&WitnessRow> = rows
            .iter()
            .copied()
            .filter(|r| in_scope(r, expected))
            .collect();
        if scope.len() < 2 {
            return refuse(REASON_NEED_TWO, scope_detail(rows, scope.len(), expected));
        }
        let fails: Vec<&WitnessRow> = scope
            .iter()
            .copied()
            .filter(|r| r.verdict == Verdict::Fail)
            .collect();
        let first_pass = scope.iter().find(|r| r.verdict == Verdict::Pass);
        let (Some(first_fail), Some(first_pass)) = (fails.first(), first_pass) else {
            let only = if fails.is_empty() { "pass" } else { "fail" };
            return refuse(
                REASON_OPPOSITE_VERDICTS,
                format!("all {} rows in scope are `{only}`", scope.len()),
            );
        };
        let signatures: BTreeSet<&str> = fails.iter().map(|r| r.signature.as_str()).collect();
        if signatures.len() > 1 {
            let list: Vec<String> = signatures.iter().map(|s| format!("`{s}`")).collect();
            return refuse(
                REASON_UNSTABLE_SIGNATURE,
                format!(
                    "fails in scope carry {} signatures: {}",
                    list.len(),
                    list.join(", ")
                ),
            );
        }
        let has = |runner: Runner| scope.iter().any(|r| r.runner == runner);
        if !has(Runner::Local) || !has(Runner::Remote) {
            let only = if has(Runner::Local) {
                "local"
            } else {
                "remote"
            };
            return refuse(
                REASON_NEED_BOTH_RUNNERS,
                format!(
                    "all {} rows in scope come from a `{only}` runner",
                    scope.len()
                ),
            );
        }
        if first_fail.signature == "ok" {
            return refuse(
                REASON_OK_SIGNATURE,
                "every fail in scope has signature `ok`, the signature of a pass".to_string(),
            );
        }
        FreezeDecision {
            admit: true,
            reason: REASON_ADMIT.to_string(),
            fail_id: Some(first_fail.witness_id.clone()),
            pass_id: Some(first_pass.witness_id.clone()),
            rejected_row: None,
            detail: format!(
                "fail `{}` ({}, seed {}, signature `{}`) and pass `{}` ({}, seed {}) among {} rows in scope",
                first_fail.witness_id,
                first_fail.runner,
                first_fail.seed,
                first_fail.signature,
                first_pass.witness_id,
                first_pass.runner,
                first_pass.seed,
                scope.len()
            ),
        }
    }

    fn in_scope(row: &WitnessRow, expected: &Expected) -> bool {
        row.property_id == expected.property_id
            && row.property_digest == expected.digest
            && row.fixture_pin == expected.pin
            && row.bound == expected.bound
    }

    /// Says how many rows are in scope and, for the others, which key first differed.
    fn scope_detail(rows: &[&WitnessRow], in_scope: usize, expected: &Expected) -> String {
        if rows.is_empty() {
            return "the batch has no witness rows".to_string();
        }
        let mut misses = [0usize; 4];
        for r in rows {
            let keys = [
                r.property_id == expected.property_id,
                r.property_digest == expected.digest,
                r.fixture_pin == expected.pin,
                r.bound == expected.bound,
            ];
            if let Some(k) = keys.iter().position(|ok| !ok) {
                misses[k] += 1;
            }
        }
        let names = ["property_id", "property_digest", "fixture_pin", "bound"];
        let out: Vec<String> = misses
            .iter()
            .zip(names)
            .filter(|(n, _)| **n > 0)
            .map(|(n, name)| format!("{n} by {name}"))
            .collect();
        let mut detail = format!("{in_scope} of {} rows in scope", rows.len());
        if !out.is_empty() {
            detail.push_str("; out of scope: ");
            detail.push_str(&out.join(", "));
        }
        detail
    }

    fn row_error(line: usize, err: &ParseError) -> String {
        match err {
            ParseError::NotJson {
                column, message, ..
            } => format!("line {line}, column {column}: not JSON: {message}"),
            ParseError::NotObject => format!("line {line}: expected a JSON object"),
            ParseError::TooDeep { .. } | ParseError::DuplicateKey { .. } => {
                format!("line {line}: {err}")
            }
            ParseError::Field(f) => match f.line {
                Some(_) => f.to_string(),
                None => format!("line {line}: {f}"),
            },
        }
    }

    fn refuse(reason: &str, detail: String) -> FreezeDecision {
        FreezeDecision {
            admit: false,
            reason: reason.to_string(),
            fail_id: None,
            pass_id: None,
            rejected_row: None,
            detail,
        }
    }

    fn reject_row(index: usize, reason: String, detail: String) -> FreezeDecision {
        FreezeDecision {
            admit: false,
            reason,
            fail_id: None,
            pass_id: None,
            rejected_row: Some(index),
            detail,
        }
    }
}

use crate::test_rng::Rng;

pub(crate) fn expected() -> Expected {
    Expected {
        property_id: "p".to_string(),
        digest: "d".repeat(64),
        pin: "e".repeat(64),
        bound: "b".to_string(),
    }
}

/// One random line of a witness file (without its `\n`), mostly rows, some of them bad.
fn random_line(rng: &mut Rng, ids: u64, seeds: u64) -> Vec<u8> {
    match rng.below(100) {
        0 => return b"not json".to_vec(),
        1 => return b"   ".to_vec(),
        2 => return vec![b'{', 0xff, b'}'],
        3 => return b"[1, 2]".to_vec(),
        _ => {}
    }
    let id = format!("w-{}", rng.below(ids));
    let digest = "d".repeat(64);
    let pin = "e".repeat(64);
    let property = if rng.chance(5) { "q" } else { "p" };
    let digest = if rng.chance(5) {
        "x".repeat(64)
    } else {
        digest
    };
    let pin = if rng.chance(5) { "y".repeat(64) } else { pin };
    let bound = if rng.chance(5) { "c" } else { "b" };
    let verdict = if rng.chance(2) {
        "maybe"
    } else {
        rng.pick(&["pass", "fail", "fail"])
    };
    let signature = rng.pick(&["ok", "assert:x", "assert:x", "assert:x", "panic:y"]);
    let runner = if rng.chance(2) {
        "cloud"
    } else {
        rng.pick(&["local", "remote"])
    };
    let writer = rng.chance(2);
    let seed = rng.below(seeds);
    let mut fields = vec![
        format!("\"witness_id\": \"{id}\""),
        format!("\"property_id\": \"{property}\""),
        format!("\"property_digest\": \"{digest}\""),
        format!("\"fixture_pin\": \"{pin}\""),
        format!("\"bound\": \"{bound}\""),
        format!("\"seed\": {seed}"),
        format!("\"verdict\": \"{verdict}\""),
        format!("\"signature\": \"{signature}\""),
        format!("\"runner\": \"{runner}\""),
        format!("\"freeze_writer\": {writer}"),
    ];
    // The rng scheme: absent (chacha8-v1) or named; the same seed under two schemes is two
    // inputs to the review.
    match rng.below(4) {
        0 => {}
        1 => fields.push("\"rng\": \"chacha8-v1\"".to_string()),
        _ => fields.push("\"rng\": \"chacha8-v2\"".to_string()),
    }
    // Some rows are replay rows (`attempt`): the review's consistency leaves them aside.
    if rng.chance(3) {
        fields.push(format!("\"attempt\": {}", 1 + rng.below(20)));
    }
    if rng.chance(3) {
        fields.remove(rng.below(fields.len() as u64) as usize);
    }
    if rng.chance(4) {
        // A member with a value of another type (or empty, or null).
        let at = rng.below(fields.len() as u64) as usize;
        let key = fields[at].split(':').next().unwrap_or("").to_string();
        let value = rng.pick(&["null", "\"\"", "17.0", "\"17\"", "true", "[1]", "{}", "-1"]);
        fields[at] = format!("{key}: {value}");
    }
    if rng.chance(5) {
        let ext = rng.pick(&[
            "run_id",
            "patch_id",
            "code",
            "replayed_signature",
            "sig",
            "rng",
        ]);
        let value = rng.pick(&["\"r1\"", "\"\"", "7", "null", "{\"x\": [1]}"]);
        fields.push(format!("\"{ext}\": {value}"));
    }
    if rng.chance(2) {
        let at = rng.below(fields.len() as u64) as usize;
        let copy = fields[at].clone();
        fields.push(copy);
    }
    if rng.chance(2) {
        fields.push("\"ext\": {\"a\": 1, \"a\": 2}".to_string());
    }
    let mut line = format!("{{{}}}", fields.join(", ")).into_bytes();
    if rng.chance(10) {
        line.push(b'\r');
    }
    line
}

/// A random batch of files: their bytes.
pub(crate) fn random_files(rng: &mut Rng) -> Vec<Vec<u8>> {
    let files = 1 + rng.below(3);
    let ids = 2 + rng.below(40);
    let seeds = 1 + rng.below(8);
    (0..files)
        .map(|_| {
            let n = rng.below(12);
            let mut bytes = Vec::new();
            for i in 0..n {
                bytes.extend(random_line(rng, ids, seeds));
                if i + 1 < n || rng.chance(70) {
                    bytes.push(b'\n');
                }
            }
            bytes
        })
        .collect()
}

/// The lines of every file read exactly (no fast path), as a whole-file reading splits them: `\n` ends a line, a `\r` before it is dropped.
fn exact_lines(files: &[Vec<u8>]) -> Vec<WitnessLine> {
    let mut out = Vec::new();
    for bytes in files {
        let pieces: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
        let last = pieces.len() - 1;
        for (i, piece) in pieces.into_iter().enumerate() {
            let text = if i < last {
                piece.strip_suffix(b"\r").unwrap_or(piece)
            } else {
                piece
            };
            out.extend(seedledger_format::parse_witness_line_exactly(i + 1, text));
        }
    }
    out
}

/// The lines of every file through the streaming reader, in order.
pub(crate) fn streamed(files: &[Vec<u8>], complete_only: bool) -> Vec<WitnessLine> {
    let mut out = Vec::new();
    for bytes in files {
        let mut reader = WitnessLineReader::new(bytes.as_slice());
        if complete_only {
            reader = reader.complete_lines_only();
        }
        while let Some(it) = reader.next_line().unwrap() {
            out.push(it);
        }
    }
    out
}

/// The fold as a caller streaming files drives it: fingerprints kept aside and read back in
/// passes of `budget`, then a second pass for the repeat.
fn decide_by_fold(lines: &[WitnessLine], budget: usize) -> FreezeDecision {
    let mut state = DecideState::new(expected());
    let mut fps = Vec::new();
    for it in lines {
        if let Some(fp) = state.push(it) {
            fps.push(fp);
        }
    }
    let pass = || Ok::<_, ()>(fps.iter().map(|&f| Ok(f)));
    let wanted = repeated_fingerprints(fps.len() as u64, budget, pass).unwrap();
    let mut finder = RepeatFinder::new(wanted, state.rejected_at());
    let mut repeat = None;
    for it in lines {
        if finder.done() {
            break;
        }
        if let Some(r) = finder.push(it) {
            repeat = Some(r);
        }
    }
    state.finish(repeat)
}

fn review_by_fold(lines: &[WitnessLine]) -> Review {
    let mut tally = ReviewTally::new(expected());
    for it in lines {
        tally.push(it);
    }
    if !tally.needs_join() {
        return tally.finish();
    }
    let mut join = tally.join();
    for it in lines {
        join.push(it);
    }
    let mut fetch = join.fetch();
    for it in lines {
        if fetch.done() {
            break;
        }
        fetch.push(it);
    }
    fetch.finish()
}

/// [`review_by_fold`] as `gate decide` streams it: the join passes over the lines whose
/// bytes tell a seed it does not want.
fn review_skipping(files: &[Vec<u8>]) -> Review {
    let lines = streamed(files, false);
    let mut tally = ReviewTally::new(expected());
    for it in &lines {
        tally.push(it);
    }
    if !tally.needs_join() {
        return tally.finish();
    }
    let mut join = tally.join();
    for bytes in files {
        let mut reader = WitnessLineReader::new(bytes.as_slice());
        while let Some(it) = reader
            .next_unless(|b| {
                seedledger_format::witness_line_seed(b).is_some_and(|s| !join.wants(s))
            })
            .unwrap()
        {
            match it {
                Some((it, _)) => join.push(it),
                None => join.skip(),
            }
        }
    }
    let mut fetch = join.fetch();
    for it in &lines {
        if fetch.done() {
            break;
        }
        fetch.push(it);
    }
    fetch.finish()
}

#[test]
fn the_fold_decides_and_reviews_as_the_slice_implementation_did() {
    let mut rng = Rng(0x5eed_1e55);
    let mut admits = 0;
    let mut reasons = BTreeSet::new();
    let mut pairs = 0;
    let mut other_scheme = 0;
    for case in 0..8_000 {
        let files = random_files(&mut rng);
        // The whole-file reading: `witness_lines_from_bytes`.
        let whole: Vec<WitnessLine> = files
            .iter()
            .flat_map(|b| crate::decide::witness_lines_from_bytes(b))
            .collect();
        let lines = streamed(&files, false);
        assert_eq!(lines, whole, "case {case}: the streaming reader");
        assert_eq!(lines, exact_lines(&files), "case {case}: the fast path");
        let want = reference::decide_freeze(&whole, &expected());
        for budget in [1, 3, usize::MAX] {
            assert_eq!(
                decide_by_fold(&lines, budget),
                want,
                "case {case} budget {budget}"
            );
        }
        assert_eq!(
            crate::decide_freeze(&lines, &expected()),
            want,
            "case {case}"
        );
        let review = same_seed_review(&whole, &expected(), None, false);
        other_scheme += usize::from(review.detail.contains("the rng schemes differ"));
        assert_eq!(review_by_fold(&lines), review, "case {case}");
        assert_eq!(
            review_skipping(&files),
            review,
            "case {case}: the join passing over the lines of other seeds"
        );
        admits += usize::from(want.admit);
        pairs += usize::from(review.passed());
        reasons.insert(want.reason.split(' ').take(2).collect::<Vec<_>>().join(" "));
    }
    // The batches reach every kind of outcome.
    assert!(admits > 50, "{admits} admits");
    assert!(pairs > 50, "{pairs} same-seed pairs");
    assert!(other_scheme > 20, "{other_scheme} refusals across schemes");
    assert!(reasons.len() >= 8, "{reasons:?}");
}

#[test]
fn complete_lines_only_leaves_out_a_torn_last_line_as_complete_lines_does() {
    let mut rng = Rng(7);
    for case in 0..5_000 {
        for bytes in random_files(&mut rng) {
            let mut torn = bytes.clone();
            let cut = rng.below(torn.len() as u64 + 1) as usize;
            torn.truncate(cut);
            let want =
                crate::decide::witness_lines_from_bytes(seedledger_format::complete_lines(&torn));
            assert_eq!(streamed(&[torn], true), want, "case {case}");
        }
    }
}

#[test]
fn a_repeated_id_is_found_across_shares_and_files() {
    let row = |id: &str, seed: u64| {
        format!(
            r#"{{"witness_id":"{id}","property_id":"p","property_digest":"{}","fixture_pin":"{}","bound":"b","seed":{seed},"verdict":"pass","signature":"ok","runner":"local","freeze_writer":false}}"#,
            "d".repeat(64),
            "e".repeat(64)
        )
    };
    let first: String = (0..50).map(|i| row(&format!("a-{i}"), i) + "\n").collect();
    let second = format!("{}\n{}\n", row("b-1", 1), row("a-17", 17));
    let lines = streamed(&[first.into_bytes(), second.into_bytes()], false);
    for budget in [1, 7, 1000] {
        let d = decide_by_fold(&lines, budget);
        assert_eq!(d.reason, "malformed witness a-17");
        assert_eq!(d.rejected_row, Some(51));
        assert!(
            d.detail
                .contains("line 2: witness_id `a-17` is already used"),
            "{}",
            d.detail
        );
    }
    assert_eq!(
        parse_witness_lines(&row("x", 1)).len(),
        1,
        "the helper writes one row per line"
    );
}
