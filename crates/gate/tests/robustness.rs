//! Robustness of every reader of seedledger's evidence, against an oracle written from
//! SPEC's text: a fuzz campaign of generated and mutated receipts, witness files, citations,
//! signed citations and spec files, plus the fixed cases the seed documents' tables state.
//!
//! Each input is checked for (a) no panic (every product call runs under `catch_unwind`),
//! (b) no fail-open answer — the product never says `freeze_eligible`, admits, accepts a
//! file or honours a citation where the oracle says otherwise — and, for receipts and witness
//! batches, the exact status or reason the oracle gives; plus metamorphic relations (a receipt
//! marked as stopped early is never eligible, unrelated rows and row order never change a
//! decision, ...). A product that refuses what the oracle accepts is counted in the notes
//! ("stricter than the oracle") where SPEC leaves a reader that room.
//!
//! Readers: `close_ledger_bytes` / `close_ledger_text` / `close_ledger` and `Receipt::parse`
//! (receipts), `decide_freeze` over `witness_lines_from_bytes` and `parse_witness_lines`
//! (witness files), `Citation::parse` (citations), `authenticate_citation` (stored citations,
//! SPEC "Who may cite": with a trust file, honoured only when the name matches the text and
//! `sig` verifies under a `citer` key; without one, `unauthenticated`) and `SpecFile::parse`
//! (spec front matter). For signed citations the oracle computes the canonical bytes with its
//! own canonical writer, the file name with `sha2` and the verification with `ed25519-dalek`;
//! the generator signs as `gate cite` does (and sometimes lets the product's own signer write
//! the file), then signs with the wrong keys, damages `sig`, edits or re-spaces the text after
//! signing, and stores it under its own, a stale or a wrong name; about half are honest.
//!
//! Sizes and replay, by environment variable:
//! * `SEEDLEDGER_FUZZ_CASES=<n>`: the number of reader inputs of the whole campaign (default
//!   24,000, a few seconds in a debug build). Each receipt feeds two readers, each witness
//!   file two; the split is 35% receipts, 35% witness files, 14% citations, 1% signed
//!   citations (each read with its trust file and a third of them without: an ed25519
//!   verification takes some 16 ms in a debug build) and 15% spec files.
//!   The large campaign, once, in release:
//!   `SEEDLEDGER_FUZZ_CASES=10000000 cargo test --release -p seedledger-gate --test robustness -- --nocapture`
//! * `SEEDLEDGER_FUZZ_CASE=<n>`: replay case `n` alone, printing what each reader answered;
//!   every finding prints the command, e.g.
//!   `SEEDLEDGER_FUZZ_CASE=417 cargo test -p seedledger-gate --test robustness fuzz_receipts -- --nocapture`.
//! * `SEEDLEDGER_FUZZ_STRICT=1`: the disagreements listed in `robustness/known.rs` (found by
//!   this campaign, reported, tolerated meanwhile in their exact shape and counted in every
//!   run's notes) are findings too.
//!
//! Case `n` of a campaign draws only from its own seed (printed with every finding), so the
//! campaign is deterministic whatever its size and number of threads.
//!
//! Layout: `robustness/json.rs` (the oracle's JSON reader and the generator's writer),
//! `robustness/oracle.rs` (SPEC's rules), `robustness/generate.rs` (documents and their
//! mutations), `robustness/checks.rs` (one input against every reader that takes it),
//! `robustness/campaign.rs` (cases, seeds, threads, findings), `robustness/cases.rs` (the
//! fixed cases), `robustness/known.rs` (reported disagreements). They are modules of this one
//! test binary, hence the `#[path]`s.
#![allow(clippy::unwrap_used, clippy::expect_used, clippy::panic)]

#[path = "robustness/campaign.rs"]
mod campaign;
#[path = "robustness/cases.rs"]
mod cases;
#[path = "robustness/checks.rs"]
mod checks;
#[path = "robustness/generate.rs"]
mod generate;
#[path = "robustness/json.rs"]
mod json;
#[path = "robustness/known.rs"]
mod known;
#[path = "robustness/oracle.rs"]
mod oracle;

use campaign::{Tally, total_inputs};

/// The share of the campaign's inputs that are signed citations (small: an ed25519
/// verification takes some 16 ms in a debug build, and an honoured citation costs two).
const SIGNED_PERCENT: u64 = 1;

/// Cases of a campaign that takes `percent` of the inputs with `readers` readers per case.
fn cases(percent: u64, readers: u64) -> u64 {
    (total_inputs() * percent / 100 / readers).max(1)
}

/// Every answer in `answers` was given at least `min` times by `reader` (not checked when
/// one case is replayed, or when the run is too small to expect it).
fn covered(tally: &Tally, reader: &str, answers: &[&str], cases: u64, per: u64) {
    if campaign::only_case().is_some() {
        return;
    }
    let min = cases / per;
    for a in answers {
        let n = tally.answered(reader, a);
        assert!(
            n >= min,
            "{reader} answered `{a}` only {n} times (want {min}): {:?}",
            tally.answers.get(reader)
        );
    }
}

#[test]
fn fuzz_receipts() {
    let n = cases(35, 2);
    let tally = campaign::run("receipts", n, |g, ctx| {
        let bytes = generate::receipt_bytes(g);
        checks::receipt(g, ctx, &bytes);
    });
    campaign::report("receipts", "fuzz_receipts", &tally);
    let mut every = oracle::STATUSES.to_vec();
    every.push("not JSON");
    covered(&tally, checks::CLOSE, &every, n, 400);
    covered(&tally, checks::RECEIPT, &["ok", "refused"], n, 50);
}

#[test]
fn fuzz_witness_batches() {
    let n = cases(35, 2);
    let tally = campaign::run("witness batches", n, |g, ctx| {
        let bytes = generate::batch_bytes(g);
        checks::batch(g, ctx, &bytes);
    });
    campaign::report("witness batches", "fuzz_witness_batches", &tally);
    covered(
        &tally,
        checks::DECIDE,
        &[
            "mint",
            "malformed (by id)",
            "malformed (by line)",
            "need_two",
            "opposite",
            "unstable",
            "both_runners",
            "ok_signature",
            "admit",
        ],
        n,
        400,
    );
}

#[test]
fn fuzz_citations() {
    let n = cases(14, 1);
    let tally = campaign::run("citations", n, |g, ctx| {
        let text = generate::citation_text(g);
        checks::citation(ctx, &text);
    });
    campaign::report("citations", "fuzz_citations", &tally);
    covered(&tally, checks::CITATION, &["ok", "refused"], n, 20);
}

#[test]
fn fuzz_signed_citations() {
    let n = cases(SIGNED_PERCENT, 1);
    let tally = campaign::run("signed citations", n, |g, ctx| {
        let case = generate::signed_citation(g);
        checks::signed_citation(ctx, &case);
    });
    campaign::report("signed citations", "fuzz_signed_citations", &tally);
    if campaign::only_case().is_some() {
        return;
    }
    // A good share is honoured: acceptance is exercised, not only refusal.
    let signed = tally.answered(checks::SIGNED, "signed");
    assert!(
        n < 100 || signed * 4 >= n,
        "only {signed} of {n} signed citations were honoured: {:?}",
        tally.answers.get(checks::SIGNED)
    );
    // Every rule refuses some citation ("not a citation" counts all its reasons).
    let min = n / 250;
    for rule in oracle::SIGNED_RULES {
        let label = format!("invalid: {rule}");
        let k: u64 = tally.answers[checks::SIGNED]
            .iter()
            .filter(|(a, _)| **a == label || a.starts_with(&format!("{label} (")))
            .map(|(_, k)| k)
            .sum();
        assert!(k >= min, "`{label}` only {k} times (want {min})");
    }
    covered(
        &tally,
        checks::UNSIGNED,
        &[
            "unauthenticated",
            "invalid: property id outside the id rule",
        ],
        n,
        150,
    );
}

#[test]
fn fuzz_spec_files() {
    let n = cases(15, 1);
    let tally = campaign::run("spec files", n, |g, ctx| {
        let text = generate::spec_text(g);
        checks::spec(ctx, &text);
    });
    campaign::report("spec files", "fuzz_spec_files", &tally);
    covered(&tally, checks::SPEC, &["ok", "refused"], n, 20);
}
