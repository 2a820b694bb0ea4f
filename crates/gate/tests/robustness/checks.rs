//! One input, every reader that takes it: the product's answer against the oracle's, the
//! product against itself (bytes, text and value paths), and metamorphic relations that must
//! hold whatever the oracle says.

use crate::campaign::Ctx;
use crate::generate::{self, BOUND, PIN, PROPERTY, Rng, SignedCitation};
use crate::json::{self, Json, Read};
use crate::known::{self, Known};
use crate::oracle::{self, Close, LineRead, RowClass, Standing};
use seedledger_format::{
    Citation, Receipt, SpecFile, TrustedKeys, WitnessLine, WitnessRow, parse_witness_lines,
};
use seedledger_gate::{
    Authenticity, CloseStatus, Closing, Expected, FreezeDecision, NotJsonError,
    authenticate_citation, close_ledger, close_ledger_bytes, close_ledger_text, decide_freeze,
    witness_lines_from_bytes,
};

pub const CLOSE: &str = "close_ledger_bytes";
pub const CLOSE_VARIANTS: &str = "close_ledger_text (metamorphic variants)";
pub const RECEIPT: &str = "Receipt::parse";
pub const DECIDE: &str = "decide_freeze(witness_lines_from_bytes)";
pub const ROWS: &str = "parse_witness_lines";
pub const CITATION: &str = "Citation::parse";
pub const SPEC: &str = "SpecFile::parse";
pub const SIGNED: &str = "authenticate_citation (trust file)";
pub const UNSIGNED: &str = "authenticate_citation (no trust file)";

fn answer(close: Close) -> &'static str {
    match close {
        Close::NotJson => "not JSON",
        Close::Status(s) => s,
    }
}

fn product_close(res: &Result<Closing, NotJsonError>) -> Close {
    match res {
        Ok(c) => Close::Status(c.status.as_str()),
        Err(_) => Close::NotJson,
    }
}

/// Records a known disagreement, or a finding when known ones are strict.
fn tolerate(ctx: &mut Ctx<'_>, reader: &'static str, k: &Known, what: String, input: &[u8]) {
    if known::strict() {
        ctx.finding("known", reader, format!("{}: {what}", k.name), input);
    } else {
        ctx.note(&format!("known: {}", k.name));
    }
}

/// Compares a close answer with the oracle's, allowing the known alternatives for `bytes`.
fn judge_close(ctx: &mut Ctx<'_>, reader: &'static str, bytes: &[u8], got: Close, want: Close) {
    if got == want {
        return;
    }
    let what = format!("product {}, oracle {}", answer(got), answer(want));
    if let Some((_, k)) = known::close_alternatives(bytes)
        .into_iter()
        .find(|(c, _)| *c == got)
    {
        tolerate(ctx, reader, k, what, bytes);
    } else if got == Close::Status("freeze_eligible") {
        ctx.finding("fail-open", reader, what, bytes);
    } else {
        ctx.finding("differs", reader, what, bytes);
    }
}

// ---------------------------------------------------------------------------------------
// Receipts: close_ledger and Receipt::parse.

pub fn receipt(g: &mut Rng, ctx: &mut Ctx<'_>, bytes: &[u8]) {
    let want = oracle::close(bytes);
    if ctx.verbose {
        eprintln!("  oracle reads: {:?}", json::read_with_facts(bytes));
    }
    let Some(res) = ctx.guard(CLOSE, bytes, || close_ledger_bytes(bytes)) else {
        return;
    };
    let got = product_close(&res);
    ctx.input(CLOSE, answer(got));
    if let Ok(c) = &res {
        assert_eq!(CloseStatus::parse(c.status.as_str()), Some(c.status));
        assert!(!c.detail.is_empty(), "a status without detail");
    }
    judge_close(ctx, CLOSE, bytes, got, want);
    // The text path and the value path say what the bytes path says.
    let text = String::from_utf8_lossy(bytes);
    if std::str::from_utf8(bytes).is_ok()
        && let Some(t) = ctx.guard(CLOSE, bytes, || close_ledger_text(&text))
        && product_close(&t) != got
    {
        ctx.finding(
            "differs",
            "close_ledger_text",
            "the text path differs from the bytes path".into(),
            bytes,
        );
    }
    let doc = match json::read(bytes) {
        Read::Doc(doc) => Some(doc),
        _ => None,
    };
    if let Some(doc) = &doc
        && !doc.repeats_a_key()
        && let Ok(value) = serde_json::from_slice::<serde_json::Value>(bytes)
        && let Some(status) = ctx.guard("close_ledger", bytes, || close_ledger(&value))
    {
        judge_close(
            ctx,
            "close_ledger",
            bytes,
            Close::Status(status.as_str()),
            want,
        );
    }
    strict_receipt(ctx, bytes, &text, got);
    if let Some(doc) = doc
        && doc.is_object()
        && !doc.repeats_a_key()
        && g.next_u64().is_multiple_of(4)
    {
        receipt_relations(ctx, &doc);
    }
}

fn strict_receipt(ctx: &mut Ctx<'_>, bytes: &[u8], text: &str, closed: Close) {
    let want = oracle::strict_receipt(text);
    let Some(res) = ctx.guard(RECEIPT, bytes, || Receipt::parse(text)) else {
        return;
    };
    ctx.input(RECEIPT, if res.is_ok() { "ok" } else { "refused" });
    match (&res, &want) {
        (Ok(r), Ok(w)) => {
            let got = oracle::StrictReceipt {
                patch_id: r.patch_id.clone(),
                property_id: r.property_id.clone(),
                planned_seeds: r.planned_seeds.clone(),
                attempted_seeds: r.attempted_seeds.clone(),
                failing_seed: r.failing_seed,
                shrink_stable: r.shrink_stable,
                fixture_hash: r.fixture_hash.clone(),
                stopped_early: r.stopped_early,
                oracle_source: r.oracle_source.as_str().to_string(),
            };
            if got != *w {
                ctx.finding(
                    "misread",
                    RECEIPT,
                    format!("values: product {got:?}, oracle {w:?}"),
                    bytes,
                );
            }
            // A receipt the strict reader accepts has every decision field.
            if std::str::from_utf8(bytes).is_ok() && closed == Close::Status("incomplete_fields") {
                ctx.finding(
                    "differs",
                    RECEIPT,
                    "accepted, yet it closes as incomplete_fields".into(),
                    bytes,
                );
            }
        }
        (Ok(_), Err(why)) => {
            ctx.finding(
                "fail-open",
                RECEIPT,
                format!("{why}: product accepts, oracle refuses"),
                bytes,
            );
        }
        (Err(e), Ok(_)) => ctx.note(&format!(
            "{RECEIPT} stricter than the oracle: {}",
            error_class(&e.to_string())
        )),
        (Err(_), Err(_)) => {}
    }
}

/// An error message without its line and values, for counting kinds.
fn error_class(message: &str) -> String {
    let m: Vec<&str> = message
        .split(": ")
        .filter(|p| !p.starts_with("line "))
        .collect();
    let m = m.join(": ");
    let cut = m
        .find(|c: char| c.is_ascii_digit())
        .unwrap_or(m.len())
        .min(70);
    m[..cut].to_string()
}

/// Relations between a receipt and its variants, whatever the statuses are. Every variant
/// is also judged against the oracle.
fn receipt_relations(ctx: &mut Ctx<'_>, doc: &Json) {
    let close_variant = |ctx: &mut Ctx<'_>, v: &Json| -> Option<Close> {
        let text = json::plain(v);
        let got = product_close(
            &ctx.guard(CLOSE_VARIANTS, text.as_bytes(), || close_ledger_text(&text))?,
        );
        ctx.input(CLOSE_VARIANTS, answer(got));
        judge_close(
            ctx,
            CLOSE_VARIANTS,
            text.as_bytes(),
            got,
            Close::Status(oracle::close_doc(v)),
        );
        Some(got)
    };
    let eligible = Close::Status("freeze_eligible");
    let Some(status) = close_variant(ctx, doc) else {
        return;
    };
    // The relations are about the product's decisions, not about known disagreements in
    // reading the text.
    if status != Close::Status(oracle::close_doc(doc)) {
        return;
    }
    // A receipt marked as stopped early is never eligible.
    let mut stopped = doc.clone();
    stopped.set("stopped_early", Json::Bool(true));
    if close_variant(ctx, &stopped) == Some(eligible) {
        ctx.finding(
            "metamorphic",
            CLOSE,
            "stopped early, yet eligible".into(),
            json::plain(&stopped).as_bytes(),
        );
    }
    // Identity fields and unknown fields do not change the status.
    let mut other = doc.clone();
    other.set("patch_id", Json::Num("7".into()));
    other.remove("property_id");
    other.set(
        "zz_unknown",
        Json::Obj(vec![("stopped_early".into(), Json::Bool(true))]),
    );
    if close_variant(ctx, &other).is_some_and(|s| s != status) {
        ctx.finding(
            "metamorphic",
            CLOSE,
            "identity or unknown fields changed the status".into(),
            json::plain(&other).as_bytes(),
        );
    }
    // Removing one attempted seed never makes a receipt eligible, unless it had attempted
    // one seed more than it planned and the cut list is the plan.
    let planned = doc.get("planned_seeds").and_then(Json::items);
    if let Some(items) = doc.get("attempted_seeds").and_then(Json::items) {
        for i in 0..items.len().min(4) {
            let mut cut_items = items.to_vec();
            cut_items.remove(i);
            let mut cut = doc.clone();
            cut.set("attempted_seeds", Json::Arr(cut_items.clone()));
            if close_variant(ctx, &cut) == Some(eligible) && planned != Some(&cut_items[..]) {
                ctx.finding(
                    "metamorphic",
                    CLOSE,
                    "a cut attempt list is eligible".into(),
                    json::plain(&cut).as_bytes(),
                );
            }
        }
    }
}

// ---------------------------------------------------------------------------------------
// Witness batches: decide_freeze over witness_lines_from_bytes, and parse_witness_lines.

pub fn expected() -> Expected {
    Expected {
        property_id: PROPERTY.into(),
        digest: generate::digest(),
        pin: PIN.into(),
        bound: BOUND.into(),
    }
}

fn expect() -> oracle::Expect {
    oracle::Expect {
        property_id: PROPERTY.into(),
        digest: generate::digest(),
        pin: PIN.into(),
        bound: BOUND.into(),
    }
}

/// The kind of a reason, for coverage counts.
pub fn reason_kind(reason: &str) -> &'static str {
    match reason {
        oracle::NEED_TWO => "need_two",
        oracle::OPPOSITE => "opposite",
        oracle::UNSTABLE => "unstable",
        oracle::BOTH_RUNNERS => "both_runners",
        oracle::OK_SIGNATURE => "ok_signature",
        oracle::ADMIT => "admit",
        r if r.starts_with("remote witness ") && r.ends_with(" attempted to mint") => "mint",
        r if r.starts_with("malformed witness line ") => "malformed (by line)",
        r if r.starts_with("malformed witness ") => "malformed (by id)",
        _ => "unknown",
    }
}

/// Line `n` (1-based) of `bytes`.
fn line_of(bytes: &[u8], n: usize) -> &[u8] {
    bytes.split(|&b| b == b'\n').nth(n - 1).unwrap_or(b"")
}

/// The oracle's reading of each line, with the known disagreements applied where the
/// product's line shows them, and which one was applied to each line.
fn adjusted(
    bytes: &[u8],
    want: &[LineRead],
    got: &[WitnessLine],
) -> Vec<(LineRead, Option<&'static Known>)> {
    let mut out: Vec<(LineRead, Option<&'static Known>)> =
        want.iter().map(|w| (w.clone(), None)).collect();
    for ((w, used), g) in out.iter_mut().zip(got) {
        if w.line != g.line {
            break;
        }
        let line = line_of(bytes, w.line);
        if g.row.is_err()
            && g.witness_id.is_none()
            && (w.class != RowClass::Malformed || w.id.is_some())
            && let Some(k) = known::unreadable_line(line)
        {
            w.class = RowClass::Malformed;
            w.id = None;
            *used = Some(k);
        }
    }
    out
}

pub fn batch(g: &mut Rng, ctx: &mut Ctx<'_>, bytes: &[u8]) {
    let e = expected();
    let read = oracle::witness_lines(bytes);
    let want = oracle::decide_lines(&read, &expect());
    let Some(lines) = ctx.guard(DECIDE, bytes, || witness_lines_from_bytes(bytes)) else {
        return;
    };
    let Some(d) = ctx.guard(DECIDE, bytes, || decide_freeze(&lines, &e)) else {
        return;
    };
    ctx.input(DECIDE, reason_kind(&d.reason));
    let got = oracle::Decision {
        reason: d.reason.clone(),
        fail_id: d.fail_id.clone(),
        pass_id: d.pass_id.clone(),
        rejected_row: d.rejected_row,
    };
    if got != want {
        let what = format!(
            "{}: product {got:?}, oracle {want:?}",
            reason_kind(&d.reason)
        );
        let (read_adjusted, used): (Vec<LineRead>, Vec<_>) =
            adjusted(bytes, &read, &lines).into_iter().unzip();
        let used = used.into_iter().flatten().next();
        if let Some(k) = used
            && oracle::decide_lines(&read_adjusted, &expect()) == got
        {
            tolerate(ctx, DECIDE, k, what, bytes);
        } else if d.admit && want.reason != oracle::ADMIT {
            ctx.finding("fail-open", DECIDE, what, bytes);
        } else {
            ctx.finding("differs", DECIDE, what, bytes);
        }
    }
    assert_eq!(d.admit, d.reason == oracle::ADMIT);
    assert_eq!(
        d.rejected_row.is_some(),
        matches!(
            reason_kind(&d.reason),
            "mint" | "malformed (by line)" | "malformed (by id)"
        )
    );
    rows(ctx, bytes, &lines);
    batch_relations(g, ctx, bytes, &lines, &read, &d);
}

/// The line reader against the oracle's reading of every line.
fn rows(ctx: &mut Ctx<'_>, bytes: &[u8], from_bytes: &[WitnessLine]) {
    let text = String::from_utf8_lossy(bytes);
    let Some(lines) = ctx.guard(ROWS, bytes, || parse_witness_lines(&text)) else {
        return;
    };
    let ok = lines.iter().filter(|l| l.row.is_ok()).count();
    ctx.input(
        ROWS,
        &format!("{} rows of {} lines", ok.min(3), lines.len().min(3)),
    );
    if std::str::from_utf8(bytes).is_ok() && lines != from_bytes {
        ctx.finding(
            "differs",
            ROWS,
            "the bytes and text readers disagree".into(),
            bytes,
        );
    }
    // Lossy text is what this reader was given: the oracle reads the same.
    let tb = text.as_bytes();
    let want = oracle::witness_lines(tb);
    let numbers: Vec<usize> = lines.iter().map(|l| l.line).collect();
    let want_numbers: Vec<usize> = want.iter().map(|l| l.line).collect();
    if numbers != want_numbers {
        ctx.finding(
            "differs",
            ROWS,
            format!("line numbers: product {numbers:?}, oracle {want_numbers:?}"),
            bytes,
        );
        return;
    }
    let adjusted = adjusted(tb, &want, &lines);
    for ((l, w), (a, k)) in lines.iter().zip(&want).zip(&adjusted) {
        let line = line_of(tb, l.line);
        let typed = typed_reading(line);
        // The product's reading of this line may differ from the oracle's only as the
        // known disagreement `k` says (then `a` differs from `w`).
        let tolerated = |ctx: &mut Ctx<'_>, what: String| match k {
            Some(k) => tolerate(ctx, ROWS, k, what, bytes),
            None => ctx.finding("differs", ROWS, what, bytes),
        };
        if l.witness_id != w.id {
            let what = format!(
                "id: line {}: product {:?}, oracle {:?}",
                l.line, l.witness_id, w.id
            );
            if l.witness_id == a.id {
                tolerated(ctx, what);
            } else {
                ctx.finding("differs", ROWS, what, bytes);
            }
        }
        let mint = w.class == RowClass::Mint;
        if l.remote_minting != mint {
            let what = format!(
                "mint: line {}: product {}, oracle {mint}",
                l.line, l.remote_minting
            );
            if !l.remote_minting && a.class == RowClass::Malformed {
                tolerated(ctx, what);
            } else if !l.remote_minting {
                ctx.finding("fail-open", ROWS, what, bytes);
            } else {
                ctx.finding("differs", ROWS, what, bytes);
            }
        }
        match (&l.row, &typed) {
            (Ok(r), Some(t)) => {
                let got = row_facts(r);
                if got != *t {
                    ctx.finding(
                        "misread",
                        ROWS,
                        format!("values: line {}: product {got:?}, oracle {t:?}", l.line),
                        bytes,
                    );
                }
            }
            (Ok(_), None) => ctx.finding(
                "fail-open",
                ROWS,
                format!(
                    "row accepted: line {}: the oracle reads no well-formed row",
                    l.line
                ),
                bytes,
            ),
            (Err(_), Some(_)) => {
                let what = format!(
                    "row refused: line {}: the oracle reads a well-formed row",
                    l.line
                );
                if a.class == RowClass::Malformed && w.class != RowClass::Malformed {
                    tolerated(ctx, what);
                } else {
                    ctx.finding("differs", ROWS, what, bytes);
                }
            }
            (Err(_), None) => {}
        }
    }
}

fn row_facts(r: &WitnessRow) -> oracle::Row {
    oracle::Row {
        witness_id: r.witness_id.clone(),
        property_id: r.property_id.clone(),
        property_digest: r.property_digest.clone(),
        fixture_pin: r.fixture_pin.clone(),
        bound: r.bound.clone(),
        seed: r.seed,
        fail: r.verdict.as_str() == "fail",
        signature: r.signature.clone(),
        remote: r.runner.as_str() == "remote",
        freeze_writer: r.freeze_writer,
    }
}

/// The oracle's typed reading of one line, the mint rule aside: a readable object, no
/// repeated key, the ten fields well formed.
fn typed_reading(line: &[u8]) -> Option<oracle::Row> {
    match json::read(line) {
        Read::Doc(doc) if doc.is_object() && !doc.repeats_a_key() => {
            let freeze_writer = doc.get("freeze_writer").and_then(Json::boolean)?;
            let mut shape = doc.clone();
            shape.set("freeze_writer", Json::Bool(false));
            match oracle::classify(&shape) {
                RowClass::Ok(row) => Some(oracle::Row {
                    freeze_writer,
                    ..row
                }),
                _ => None,
            }
        }
        _ => None,
    }
}

/// Relations of a batch and its variants, on the product's own lines.
fn batch_relations(
    g: &mut Rng,
    ctx: &mut Ctx<'_>,
    bytes: &[u8],
    lines: &[WitnessLine],
    read: &[LineRead],
    d: &FreezeDecision,
) {
    let e = expected();
    let outcome = |d: &FreezeDecision| {
        (
            d.admit,
            d.reason.clone(),
            d.fail_id.clone(),
            d.pass_id.clone(),
        )
    };
    // A batch with a minting row never admits.
    if read.iter().any(|l| l.class == RowClass::Mint) && d.admit {
        ctx.finding(
            "fail-open",
            DECIDE,
            "admitted a batch with a minting row".into(),
            bytes,
        );
    }
    if d.admit {
        // An admit names a fail with a real signature and a pass, both in scope, and the
        // scope holds both runners.
        let scope: Vec<&oracle::Row> = read
            .iter()
            .filter_map(|l| match &l.class {
                RowClass::Ok(r) => Some(r),
                _ => None,
            })
            .filter(|r| {
                r.property_id == e.property_id
                    && r.property_digest == e.digest
                    && r.fixture_pin == e.pin
                    && r.bound == e.bound
            })
            .collect();
        let named = |id: &Option<String>| scope.iter().find(|r| Some(&r.witness_id) == id.as_ref());
        let fail_ok = named(&d.fail_id).is_some_and(|r| r.fail && r.signature != "ok");
        let pass_ok = named(&d.pass_id).is_some_and(|r| !r.fail);
        let runners = scope.iter().any(|r| r.remote) && scope.iter().any(|r| !r.remote);
        if !(fail_ok && pass_ok && runners) {
            ctx.finding(
                "metamorphic",
                DECIDE,
                "an admit that names the wrong rows".into(),
                bytes,
            );
        }
    }
    // An out-of-scope, well-formed row appended at the end changes nothing.
    let mut more = lines.to_vec();
    let extra = format!(
        "{{\"witness_id\":\"w-unrelated\",\"property_id\":\"unrelated\",\"property_digest\":\"{}\",\"fixture_pin\":\"{PIN}\",\"bound\":\"{BOUND}\",\"seed\":1,\"verdict\":\"pass\",\"signature\":\"ok\",\"runner\":\"remote\",\"freeze_writer\":false}}",
        e.digest
    );
    let mut extra = parse_witness_lines(&extra);
    extra[0].line = 100_000;
    more.extend(extra);
    if ctx
        .guard(DECIDE, bytes, || decide_freeze(&more, &e))
        .is_some_and(|m| outcome(&m) != outcome(d))
    {
        ctx.finding(
            "metamorphic",
            DECIDE,
            "an unrelated row changed the outcome".into(),
            bytes,
        );
    }
    if d.rejected_row.is_some() {
        return;
    }
    // Without a bad row, order decides only which ids are named, never the outcome.
    let mut shuffled = lines.to_vec();
    for i in (1..shuffled.len()).rev() {
        shuffled.swap(i, (g.next_u64() % (i as u64 + 1)) as usize);
    }
    if ctx
        .guard(DECIDE, bytes, || decide_freeze(&shuffled, &e))
        .is_some_and(|s| (s.admit, &s.reason) != (d.admit, &d.reason))
    {
        ctx.finding(
            "metamorphic",
            DECIDE,
            "order changed the outcome".into(),
            bytes,
        );
    }
    // Without its remote rows, or without its passes, a batch never admits.
    let without = |drop: &dyn Fn(&WitnessRow) -> bool| -> Vec<WitnessLine> {
        lines
            .iter()
            .filter(|l| !l.row.as_ref().is_ok_and(drop))
            .cloned()
            .collect()
    };
    for (what, rest) in [
        (
            "no remote rows",
            without(&|r| r.runner.as_str() == "remote"),
        ),
        ("no passes", without(&|r| r.verdict.as_str() == "pass")),
    ] {
        if ctx
            .guard(DECIDE, bytes, || decide_freeze(&rest, &e))
            .is_some_and(|x| x.admit)
        {
            ctx.finding("fail-open", DECIDE, format!("admitted with {what}"), bytes);
        }
    }
}

// ---------------------------------------------------------------------------------------
// Citations and spec files.

pub fn citation(ctx: &mut Ctx<'_>, text: &str) {
    let bytes = text.as_bytes();
    let want = oracle::citation(text);
    let Some(res) = ctx.guard(CITATION, bytes, || Citation::parse(text)) else {
        return;
    };
    ctx.input(CITATION, if res.is_ok() { "ok" } else { "refused" });
    match (&res, &want) {
        (Ok(c), Ok(w)) => {
            let got = citation_facts(c);
            if got != *w {
                ctx.finding(
                    "misread",
                    CITATION,
                    format!("values: product {got:?}, oracle {w:?}"),
                    bytes,
                );
            }
        }
        (Ok(c), Err(why)) => {
            let what = format!(
                "{why}: product accepts (expires_at {:?}, written_at {:?}, seed {:?}, review {}), oracle refuses",
                c.expires_at,
                c.written_at,
                c.seed,
                c.same_seed_review.as_str()
            );
            ctx.finding("fail-open", CITATION, what, bytes);
        }
        (Err(e), Ok(_)) => ctx.note(&format!(
            "{CITATION} stricter than the oracle: {}",
            error_class(&e.to_string())
        )),
        (Err(_), Err(_)) => {}
    }
}

/// What the product read of a citation, in the oracle's terms.
fn citation_facts(c: &Citation) -> oracle::CitationFacts {
    oracle::CitationFacts {
        patch_id: c.patch_id.clone(),
        property_id: c.property_id.clone(),
        property_digest: c.property_digest.clone(),
        fixture_pin: c.fixture_pin.clone(),
        bound: c.bound.clone(),
        signature: c.signature.clone(),
        fail_id: c.fail_id.clone(),
        pass_id: c.pass_id.clone(),
        seed: c.seed,
        waived: c.same_seed_review.as_str() == "waived",
        code: c.code.clone(),
        code_base: c.code_base.clone(),
        expires_at: c.expires_at.clone(),
        written_at: c.written_at.clone(),
        key_id: c.key_id.clone(),
        sig: c.sig.clone(),
        flake: c.flake.as_ref().map(|f| oracle::FlakeFacts {
            class: f.class.clone(),
            seed: f.seed,
            local: f
                .runners
                .local
                .as_ref()
                .map(|r| (r.replays, r.fails, r.interval.clone())),
            remote: f
                .runners
                .remote
                .as_ref()
                .map(|r| (r.replays, r.fails, r.interval.clone())),
        }),
    }
}

/// One stored citation read with its repository's trust file, and sometimes as if there
/// were none.
pub fn signed_citation(ctx: &mut Ctx<'_>, case: &SignedCitation) {
    if ctx.verbose {
        eprintln!("  story: {}", case.story.join("; "));
        eprintln!("  file name: {:?}", case.file_name);
        eprintln!("  trust file:\n{}", case.trust.text);
        eprintln!("  text: {:?}", case.text);
        if let Read::Doc(doc) = json::read(case.text.as_bytes()) {
            let canonical = oracle::canonical_without_sig(&doc);
            let canonical = canonical.as_deref().map(String::from_utf8_lossy);
            eprintln!("  oracle's canonical bytes: {canonical:?}");
        }
    }
    // The trust file is the generator's; the product must read the keys it declares.
    let keys = TrustedKeys::parse(&case.trust.text).expect("the generated trust file reads");
    let declared: Vec<(&str, &str)> = keys
        .keys()
        .iter()
        .map(|k| (k.key_id.as_str(), k.role.as_str()))
        .collect();
    let told: Vec<(&str, &str)> = case
        .trust
        .keys
        .iter()
        .map(|k| (k.key_id.as_str(), k.role))
        .collect();
    assert_eq!(
        declared, told,
        "the trust file declares what the oracle is told"
    );
    authenticate(ctx, SIGNED, case, Some((&keys, &case.trust.keys)));
    if case.without_trust_too {
        authenticate(ctx, UNSIGNED, case, None);
    }
}

/// `authenticate_citation` against the oracle, with the trust file (`keys`, and the same
/// keys as the oracle is told them) or without one.
fn authenticate(
    ctx: &mut Ctx<'_>,
    reader: &'static str,
    case: &SignedCitation,
    keys: Option<(&TrustedKeys, &[oracle::TrustKey])>,
) {
    let (text, name) = (case.text.as_str(), case.file_name.as_str());
    let bytes = text.as_bytes();
    let want = oracle::authenticate(text, name, keys.map(|k| k.1));
    let Some(res) = ctx.guard(reader, bytes, || {
        authenticate_citation(text, name, keys.map(|k| k.0))
    }) else {
        return;
    };
    let standing = |a: &Authenticity| match a {
        Authenticity::Signed { key_id } => Standing::Signed(key_id.clone()),
        Authenticity::Unauthenticated => Standing::Unauthenticated,
    };
    let label = match (&res, &want) {
        (Ok((_, Authenticity::Signed { .. })), _) => "signed".to_string(),
        (Ok((_, Authenticity::Unauthenticated)), _) => "unauthenticated".to_string(),
        (Err(_), Err(r)) if r.detail.is_empty() => format!("invalid: {}", r.rule),
        (Err(_), Err(r)) => format!("invalid: {} ({})", r.rule, r.detail),
        (Err(_), Ok(_)) => "invalid (the oracle accepts)".to_string(),
    };
    ctx.input(reader, &label);
    if case.by_product && keys.is_some() {
        ctx.note(&format!("written by the product's signer: {label}"));
    }
    if ctx.verbose {
        eprintln!("  product: {res:?}\n  oracle: {want:?}");
    }
    match (&res, &want) {
        (Ok((c, a)), Ok((w, ws))) => {
            let got = standing(a);
            if got != *ws {
                // Honoured without the check a trust file asks for is the open door.
                let kind = if keys.is_some() && got == Standing::Unauthenticated {
                    "fail-open"
                } else {
                    "differs"
                };
                let what = format!("standing: product {got:?}, oracle {ws:?}; name {name:?}");
                ctx.finding(kind, reader, what, bytes);
            }
            let got = citation_facts(c);
            if got != *w {
                let what = format!("values: product {got:?}, oracle {w:?}");
                ctx.finding("misread", reader, what, bytes);
            }
        }
        (Ok((_, a)), Err(r)) => {
            let what = format!(
                "{} ({}): product accepts ({}), oracle refuses; name {name:?}",
                r.rule,
                r.detail,
                a.label()
            );
            ctx.finding("fail-open", reader, what, bytes);
        }
        (Err(e), Ok(_)) => ctx.note(&format!(
            "{reader} stricter than the oracle: {}",
            error_class(e)
        )),
        (Err(_), Err(_)) => {}
    }
}

pub fn spec(ctx: &mut Ctx<'_>, text: &str) {
    let bytes = text.as_bytes();
    let want = oracle::spec_file(text);
    let Some(res) = ctx.guard(SPEC, bytes, || SpecFile::parse(text)) else {
        return;
    };
    ctx.input(SPEC, if res.is_ok() { "ok" } else { "refused" });
    match (&res, &want) {
        (Ok(s), Ok(w)) => {
            let got = oracle::Front {
                property_id: s.property_id.clone(),
                bound: s.bound.clone(),
                fixture: s.fixture.clone(),
                oracle_source: s.oracle_source.as_str().to_string(),
            };
            if got != *w {
                ctx.finding(
                    "misread",
                    SPEC,
                    format!("values: product {got:?}, oracle {w:?}"),
                    bytes,
                );
            }
        }
        (Ok(_), Err(why)) => ctx.finding(
            "fail-open",
            SPEC,
            format!("{why}: product accepts, oracle refuses"),
            bytes,
        ),
        (Err(e), Ok(_)) => ctx.finding(
            "differs",
            SPEC,
            format!("refused: {e}; the oracle accepts"),
            bytes,
        ),
        (Err(_), Err(_)) => {}
    }
}
