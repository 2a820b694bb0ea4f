//! What SPEC says every reader must answer, written from SPEC's text (and, for the file
//! formats SPEC leaves to the product, from their documented `# Format`), never from the
//! product's code. It reads bytes with its own JSON reader ([`crate::json`]), and for signed
//! citations writes canonical bytes with its own writer, hashes with `sha2` and verifies with
//! `ed25519-dalek` directly.
//!
//! Its shape differs on purpose from the gate's early-return chains: each SPEC rule is a
//! predicate in a table over facts read once from the document, and the answer is the first
//! row whose predicate holds. Rule 1 of decision 2 classifies every row on its own, then the
//! first row that is not a well-formed witness decides.
//!
//! Readings of places where SPEC leaves room are marked "Reading:".

use crate::json::{self, Json, Read};
use ed25519_dalek::{Signature, VerifyingKey};
use sha2::{Digest, Sha256};
use std::cell::OnceCell;

// ---------------------------------------------------------------------------------------
// Gate decision 1: close_ledger.

/// What closing a receipt's bytes gives.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Close {
    /// "A file that is not JSON at all is an input error."
    NotJson,
    /// One of SPEC's ten statuses.
    Status(&'static str),
}

/// SPEC's ten statuses, in table order.
pub const STATUSES: [&str; 10] = [
    "incomplete_fields",
    "empty_plan",
    "early_stop_incomplete",
    "seed_gap",
    "budget_pass_no_freeze",
    "seed_mismatch",
    "oracle_unreviewed",
    "shrink_unstable",
    "fixture_unbound",
    "freeze_eligible",
];

/// A receipt whose six decision fields are all present and typed, with its failing seed.
struct Decisive {
    planned: Vec<u64>,
    attempted: Vec<u64>,
    stopped_early: bool,
    shrink_stable: bool,
    oracle_source: String,
    fixture_hash: String,
    failing: Option<u64>,
}

/// SPEC's table: `(row, status, applies)`. `None` stands for "a decision field is missing"
/// (row 1); the other rows are only asked about complete receipts.
type CloseRow = (u8, &'static str, fn(Option<&Decisive>) -> bool);

const CLOSE_TABLE: [CloseRow; 10] = [
    (1, "incomplete_fields", |r| r.is_none()),
    (2, "empty_plan", |r| r.is_some_and(|r| r.planned.is_empty())),
    (3, "early_stop_incomplete", |r| {
        r.is_some_and(|r| r.stopped_early)
    }),
    (4, "seed_gap", |r| {
        r.is_some_and(|r| r.attempted != r.planned)
    }),
    (5, "budget_pass_no_freeze", |r| {
        r.is_some_and(|r| r.failing.is_none())
    }),
    (6, "seed_mismatch", |r| {
        r.is_some_and(|r| r.failing.is_some_and(|f| !r.attempted.contains(&f)))
    }),
    (7, "oracle_unreviewed", |r| {
        r.is_some_and(|r| r.oracle_source != "human_reviewed")
    }),
    (8, "shrink_unstable", |r| {
        r.is_some_and(|r| !r.shrink_stable)
    }),
    (9, "fixture_unbound", |r| {
        r.is_some_and(|r| !is_sha256_hex(&r.fixture_hash))
    }),
    (10, "freeze_eligible", |_| true),
];

/// Closes a receipt's bytes as SPEC "Gate decision 1" says.
pub fn close(bytes: &[u8]) -> Close {
    match json::read(bytes) {
        Read::NotJson(..) => Close::NotJson,
        // Reading: valid JSON past the readers' documented depth bound is not a receipt
        // this format describes; fail closed.
        Read::TooDeep => Close::Status("incomplete_fields"),
        Read::Doc(doc) => Close::Status(close_doc(&doc)),
    }
}

/// Closes a receipt that is JSON.
pub fn close_doc(doc: &Json) -> &'static str {
    let decisive = decisive(doc);
    CLOSE_TABLE
        .iter()
        .find(|(_, _, applies)| applies(decisive.as_ref()))
        .map_or("freeze_eligible", |(_, status, _)| status)
}

/// The decision fields, or `None` when SPEC counts one of them as missing: "A required field
/// that is missing, null, an empty string, or of the wrong type counts as missing", "any
/// other value [of `failing_seed`] that is not a seed counts as a missing field too", "a
/// JSON value that is not an object is `incomplete_fields`", and (SPEC "Duplicate keys") a
/// receipt with a repeated key anywhere closes as `incomplete_fields`.
fn decisive(doc: &Json) -> Option<Decisive> {
    if !doc.is_object() || doc.repeats_a_key() {
        return None;
    }
    let failing = match doc.get("failing_seed") {
        None | Some(Json::Null) => None,
        Some(v) => Some(v.seed()?),
    };
    Some(Decisive {
        planned: seed_list(doc.get("planned_seeds")?)?,
        attempted: seed_list(doc.get("attempted_seeds")?)?,
        stopped_early: doc.get("stopped_early")?.boolean()?,
        shrink_stable: doc.get("shrink_stable")?.boolean()?,
        oracle_source: non_empty(doc.get("oracle_source")?)?.to_string(),
        fixture_hash: non_empty(doc.get("fixture_hash")?)?.to_string(),
        failing,
    })
}

/// Reading: an array is of the right type only when every element is a seed.
fn seed_list(v: &Json) -> Option<Vec<u64>> {
    v.items()?.iter().map(Json::seed).collect()
}

fn non_empty(v: &Json) -> Option<&str> {
    v.text().filter(|s| !s.is_empty())
}

fn is_hex64(s: &str) -> bool {
    s.len() == 64 && s.chars().all(|c| matches!(c, '0'..='9' | 'a'..='f'))
}

/// SPEC row 9: `sha256:` + 64 lowercase hex.
fn is_sha256_hex(s: &str) -> bool {
    s.strip_prefix("sha256:").is_some_and(is_hex64)
}

// ---------------------------------------------------------------------------------------
// The strict receipt reader (`Receipt::parse`).

/// A receipt SPEC's "Receipt" table accepts: the nine required fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StrictReceipt {
    pub patch_id: String,
    pub property_id: String,
    pub planned_seeds: Vec<u64>,
    pub attempted_seeds: Vec<u64>,
    pub failing_seed: Option<u64>,
    pub shrink_stable: bool,
    pub fixture_hash: String,
    pub stopped_early: bool,
    pub oracle_source: String,
}

/// Top-level extensions the receipt's `# Format` documents, with their JSON type. `null`
/// stands for "absent" in every one of them (reading: they are optional).
const RECEIPT_EXTENSIONS: [(&str, Ext); 25] = [
    ("schema_version", Ext::U32),
    ("tool", Ext::Str),
    ("rng", Ext::Str),
    ("property_digest", Ext::Str),
    ("bound", Ext::Str),
    ("spec_path", Ext::Str),
    ("spec_committed", Ext::Bool),
    ("fixture_path", Ext::Str),
    ("runner", Ext::Runner),
    ("run_id", Ext::Str),
    ("code", Ext::Str),
    ("code_base", Ext::Str),
    ("code_paths", Ext::Strs),
    ("fixture_hash_after", Ext::Str),
    ("fixture_changed", Ext::Bool),
    ("failing_seeds", Ext::Seeds),
    ("verdicts", Ext::Str),
    ("failures", Ext::Objects),
    ("failure_modes", Ext::Objects),
    ("shrink_status", Ext::Str),
    ("shrink", Ext::Object),
    ("started_at", Ext::Str),
    ("finished_at", Ext::Str),
    ("elapsed_ms", Ext::U64),
    // Not an extension: listed so that a wrong type is refused like the others.
    ("failing_seed", Ext::U64),
];

#[derive(Debug, Clone, Copy)]
enum Ext {
    Str,
    Bool,
    U32,
    U64,
    Runner,
    Strs,
    Seeds,
    Object,
    Objects,
}

impl Ext {
    fn admits(self, v: &Json) -> bool {
        match self {
            Ext::Str => v.text().is_some(),
            Ext::Bool => v.boolean().is_some(),
            Ext::U32 => v.seed().is_some_and(|n| n <= u64::from(u32::MAX)),
            Ext::U64 => v.seed().is_some(),
            Ext::Runner => matches!(v.text(), Some("local" | "remote")),
            Ext::Strs => v
                .items()
                .is_some_and(|i| i.iter().all(|s| s.text().is_some())),
            Ext::Seeds => v
                .items()
                .is_some_and(|i| i.iter().all(|s| s.seed().is_some())),
            Ext::Object => v.is_object(),
            Ext::Objects => v.items().is_some_and(|i| i.iter().all(Json::is_object)),
        }
    }
}

/// What a strict receipt reader may accept, or why not. Reading: SPEC's table gives the
/// type of each required field; `oracle_source` is one of its two values (SPEC "Property
/// spec files"); `failing_seed` may be absent (SPEC Gate decision 1); strings are non-empty
/// (SPEC: an empty string counts as missing); `fixture_hash`'s shape is row 9's business,
/// not the reader's; documented extensions must have their documented type. Nested
/// extension records are not checked here (the product may be stricter there).
pub fn strict_receipt(text: &str) -> Result<StrictReceipt, &'static str> {
    let doc = match json::read(text.as_bytes()) {
        Read::NotJson(..) => return Err("not JSON"),
        Read::TooDeep => return Err("too deep"),
        Read::Doc(d) => d,
    };
    if !doc.is_object() {
        return Err("not an object");
    }
    if doc.repeats_a_key() {
        return Err("repeated key");
    }
    for (key, ext) in RECEIPT_EXTENSIONS {
        if let Some(v) = doc.get(key)
            && *v != Json::Null
            && !ext.admits(v)
        {
            return Err("an extension of the wrong type");
        }
    }
    let text_field = |k: &str| doc.get(k).and_then(non_empty).map(str::to_string);
    let oracle_source = text_field("oracle_source").ok_or("oracle_source")?;
    if !matches!(oracle_source.as_str(), "human_reviewed" | "model_draft") {
        return Err("oracle_source is neither value");
    }
    let failing_seed = match doc.get("failing_seed") {
        None | Some(Json::Null) => None,
        Some(v) => Some(v.seed().ok_or("failing_seed")?),
    };
    let flag = |k: &str| doc.get(k).and_then(Json::boolean);
    Ok(StrictReceipt {
        patch_id: text_field("patch_id").ok_or("patch_id")?,
        property_id: text_field("property_id").ok_or("property_id")?,
        planned_seeds: doc
            .get("planned_seeds")
            .and_then(seed_list)
            .ok_or("planned_seeds")?,
        attempted_seeds: doc
            .get("attempted_seeds")
            .and_then(seed_list)
            .ok_or("attempted_seeds")?,
        failing_seed,
        shrink_stable: flag("shrink_stable").ok_or("shrink_stable")?,
        fixture_hash: text_field("fixture_hash").ok_or("fixture_hash")?,
        stopped_early: flag("stopped_early").ok_or("stopped_early")?,
        oracle_source,
    })
}

// ---------------------------------------------------------------------------------------
// Witness rows and gate decision 2.

/// The values `decide_freeze` is asked about (computed locally, never from the rows).
#[derive(Debug, Clone)]
pub struct Expect {
    pub property_id: String,
    pub digest: String,
    pub pin: String,
    pub bound: String,
}

/// A well-formed witness row (SPEC "Witness row": exactly these ten fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Row {
    pub witness_id: String,
    pub property_id: String,
    pub property_digest: String,
    pub fixture_pin: String,
    pub bound: String,
    pub seed: u64,
    pub fail: bool,
    pub signature: String,
    pub remote: bool,
    pub freeze_writer: bool,
}

/// What rule 1 says of one line on its own.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RowClass {
    /// "remote with `freeze_writer: true`".
    Mint,
    Malformed,
    Ok(Row),
}

/// One non-blank line of a witness file, as SPEC reads it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LineRead {
    /// 1-based line number in the file.
    pub line: usize,
    /// The row's id: its top-level `witness_id`, a non-empty string, when the line is
    /// readable JSON. Reading: a line that is not JSON, or nests past the readers' bound,
    /// has no id ("name its line when it has no id"); a row that names two different
    /// `witness_id`s has no single id either.
    pub id: Option<String>,
    pub class: RowClass,
}

/// Reads a witness file's bytes into its non-blank lines. Reading: lines end at `\n`
/// (JSON Lines; a `\r` before it is JSON whitespace); a line is blank when every character
/// in it is whitespace — it shows nothing and holds no row, so it is not a row at all. A line
/// that is not UTF-8 is not blank and not JSON.
pub fn witness_lines(bytes: &[u8]) -> Vec<LineRead> {
    bytes
        .split(|&b| b == b'\n')
        .enumerate()
        .filter(|(_, l)| !std::str::from_utf8(l).is_ok_and(|s| s.chars().all(char::is_whitespace)))
        .map(|(i, l)| read_row(i + 1, l))
        .collect()
}

fn read_row(line: usize, bytes: &[u8]) -> LineRead {
    let doc = match json::read(bytes) {
        Read::Doc(doc) => doc,
        Read::NotJson(..) | Read::TooDeep => {
            return LineRead {
                line,
                id: None,
                class: RowClass::Malformed,
            };
        }
    };
    // Reading: a row that repeats `witness_id` with one value still has that id; with
    // different values it has none.
    let mut ids = doc.members("witness_id").map(non_empty);
    let first = ids.next().flatten();
    let id = first
        .filter(|f| ids.all(|it| it == Some(*f)))
        .map(str::to_string);
    LineRead {
        line,
        id,
        class: classify(&doc),
    }
}

/// Rule 1 for one row. Reading, in this order:
/// * SPEC "Duplicate keys": "a witness row with one is `malformed witness <id>`" — so a row
///   that repeats a key is malformed even when it also looks like a mint attempt (which of
///   its values would count is exactly what cannot be told);
/// * then "remote with `freeze_writer: true`" — rule 1 lists it first, and the seed
///   document checks it before the row's shape, so a minting row is named as such even when
///   it also lacks fields;
/// * then the shape: "runner not local/remote or verdict not pass/fail", "not valid JSON or
///   lacks a field". A field that is null, an empty string or of the wrong type is lacking
///   (as SPEC says of receipts). A digest or pin that is not 64 hex is not a malformed row:
///   it is a row out of scope, since scope compares them with the expected values.
pub fn classify(doc: &Json) -> RowClass {
    if !doc.is_object() || doc.repeats_a_key() {
        return RowClass::Malformed;
    }
    if doc.get("runner").and_then(Json::text) == Some("remote")
        && doc.get("freeze_writer").and_then(Json::boolean) == Some(true)
    {
        return RowClass::Mint;
    }
    typed_row(doc).map_or(RowClass::Malformed, RowClass::Ok)
}

fn typed_row(doc: &Json) -> Option<Row> {
    let s = |k: &str| doc.get(k).and_then(non_empty).map(str::to_string);
    let fail = match doc.get("verdict")?.text()? {
        "pass" => false,
        "fail" => true,
        _ => return None,
    };
    let remote = match doc.get("runner")?.text()? {
        "local" => false,
        "remote" => true,
        _ => return None,
    };
    Some(Row {
        witness_id: s("witness_id")?,
        property_id: s("property_id")?,
        property_digest: s("property_digest")?,
        fixture_pin: s("fixture_pin")?,
        bound: s("bound")?,
        seed: doc.get("seed")?.seed()?,
        fail,
        signature: s("signature")?,
        remote,
        freeze_writer: doc.get("freeze_writer")?.boolean()?,
    })
}

/// The decision SPEC gives for a batch.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub reason: String,
    pub fail_id: Option<String>,
    pub pass_id: Option<String>,
    /// Rule 1: the index (among non-blank lines) of the row that refused the batch.
    pub rejected_row: Option<usize>,
}

pub const NEED_TWO: &str = "need two witnesses on the same pin, digest, and bound";
pub const OPPOSITE: &str = "opposite verdicts required";
pub const UNSTABLE: &str = "fail signature is not stable";
pub const BOTH_RUNNERS: &str = "need both a local witness and a remote witness";
pub const OK_SIGNATURE: &str = "fail witness cannot carry an ok signature";
pub const ADMIT: &str = "stable signature across opposite verdicts";

/// Rules 2-6 as `(reason, applies to the rows in scope)`; rule 7 admits.
type ScopeRule = (&'static str, fn(&[&Row]) -> bool);

const SCOPE_RULES: [ScopeRule; 5] = [
    (NEED_TWO, |scope| scope.len() < 2),
    (OPPOSITE, |scope| {
        !scope.iter().any(|r| r.fail) || !scope.iter().any(|r| !r.fail)
    }),
    (UNSTABLE, |scope| {
        let mut sigs: Vec<&str> = scope
            .iter()
            .filter(|r| r.fail)
            .map(|r| r.signature.as_str())
            .collect();
        sigs.sort_unstable();
        sigs.dedup();
        sigs.len() > 1
    }),
    (BOTH_RUNNERS, |scope| {
        !scope.iter().any(|r| r.remote) || !scope.iter().any(|r| !r.remote)
    }),
    // Rule 4 has already made the fails' signature one string.
    (OK_SIGNATURE, |scope| {
        scope.iter().any(|r| r.fail && r.signature == "ok")
    }),
];

/// SPEC "Gate decision 2" over a witness file's bytes.
pub fn decide(bytes: &[u8], expect: &Expect) -> Decision {
    decide_lines(&witness_lines(bytes), expect)
}

/// Rule 1 names the first line that is not a well-formed, new witness. Reading: SPEC says
/// `witness_id` is unique, so a row whose id an earlier row already used is the one that
/// breaks that, and is `malformed witness <id>`.
pub fn decide_lines(lines: &[LineRead], expect: &Expect) -> Decision {
    let repeats_an_id = |k: usize| match &lines[k].class {
        RowClass::Ok(row) => lines[..k].iter().any(|l| match &l.class {
            RowClass::Ok(earlier) => earlier.witness_id == row.witness_id,
            _ => false,
        }),
        _ => false,
    };
    let bad =
        (0..lines.len()).find(|&k| !matches!(lines[k].class, RowClass::Ok(_)) || repeats_an_id(k));
    if let Some(k) = bad {
        let it = &lines[k];
        let name = it.id.clone().unwrap_or_else(|| format!("line {}", it.line));
        let reason = match it.class {
            RowClass::Mint => format!("remote witness {name} attempted to mint"),
            _ => format!("malformed witness {name}"),
        };
        return Decision {
            reason,
            fail_id: None,
            pass_id: None,
            rejected_row: Some(k),
        };
    }
    let scope: Vec<&Row> = lines
        .iter()
        .filter_map(|l| match &l.class {
            RowClass::Ok(row) => Some(row),
            _ => None,
        })
        .filter(|r| {
            r.property_id == expect.property_id
                && r.property_digest == expect.digest
                && r.fixture_pin == expect.pin
                && r.bound == expect.bound
        })
        .collect();
    if let Some((reason, _)) = SCOPE_RULES.iter().find(|(_, applies)| applies(&scope)) {
        return Decision {
            reason: (*reason).to_string(),
            fail_id: None,
            pass_id: None,
            rejected_row: None,
        };
    }
    // Reading: "the first fail" and "the first pass" are first in the batch's order.
    let first = |fail: bool| {
        scope
            .iter()
            .find(|r| r.fail == fail)
            .map(|r| r.witness_id.clone())
    };
    Decision {
        reason: ADMIT.to_string(),
        fail_id: first(true),
        pass_id: first(false),
        rejected_row: None,
    }
}

// ---------------------------------------------------------------------------------------
// Citations (`Citation::parse`; format documented on `Citation`).

/// What a citation names, as SPEC "Citation" and the documented format say.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CitationFacts {
    pub patch_id: String,
    pub property_id: String,
    pub property_digest: String,
    pub fixture_pin: String,
    pub bound: String,
    pub signature: String,
    pub fail_id: String,
    pub pass_id: String,
    pub seed: Option<u64>,
    pub waived: bool,
    pub code: String,
    pub code_base: Option<String>,
    pub expires_at: String,
    pub written_at: String,
    pub key_id: Option<String>,
    pub sig: Option<String>,
    /// Schema 3's `flake`: class, seed, and the local and remote `(replays, fails, interval)`.
    pub flake: Option<FlakeFacts>,
}

/// One role's `(replays, fails, interval)` in a citation's `flake`.
pub type RoleFacts = (u64, u64, [String; 2]);

/// A citation's `flake` record (SPEC "Flake rate").
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FlakeFacts {
    pub class: String,
    pub seed: u64,
    pub local: Option<RoleFacts>,
    pub remote: Option<RoleFacts>,
}

/// SPEC "Flake rate"'s classes, first match wins, from each role's (replays, fails).
pub fn flake_class(roles: &[(u64, u64)]) -> &'static str {
    let replayed: Vec<(u64, u64)> = roles.iter().copied().filter(|r| r.0 > 0).collect();
    if replayed.iter().any(|&(n, k)| k > 0 && k < n) {
        "flaky"
    } else if replayed.is_empty() || replayed.iter().any(|&(n, _)| n < 20) {
        "insufficient"
    } else if replayed.iter().all(|&(n, k)| k == n) {
        "deterministic"
    } else if replayed.iter().any(|&(n, k)| k == n) {
        "environment-dependent"
    } else {
        "not reproduced"
    }
}

/// `d.dddd` as ten-thousandths.
fn four_digits(v: &Json) -> Option<u32> {
    let t = v.text()?;
    let b = t.as_bytes();
    (b.len() == 6
        && b[1] == b'.'
        && t.bytes()
            .enumerate()
            .all(|(i, c)| i == 1 || c.is_ascii_digit()))
    .then(|| t[..1].parse::<u32>().ok().zip(t[2..].parse::<u32>().ok()))
    .flatten()
    .map(|(w, f)| w * 10_000 + f)
}

/// A `flake` member: an object of `class` (one of SPEC's five, the one its counts give),
/// `seed`, and `runners` whose `local` and `remote` (each absent or null, else `replays` from
/// 1, `fails` at most `replays`, `interval` two `d.dddd` texts with lo <= hi <= 1) say the
/// counts; other members are ignored.
fn flake_facts(v: &Json) -> Result<FlakeFacts, &'static str> {
    if !v.is_object() {
        return Err("flake");
    }
    let seed = v.get("seed").and_then(Json::seed).ok_or("flake")?;
    let class = v
        .get("class")
        .and_then(Json::text)
        .ok_or("flake")?
        .to_string();
    let runners = v.get("runners").filter(|r| r.is_object()).ok_or("flake")?;
    let role = |name: &str| -> Result<Option<RoleFacts>, &'static str> {
        let r = match runners.get(name) {
            None | Some(Json::Null) => return Ok(None),
            Some(r) if r.is_object() => r,
            Some(_) => return Err("flake"),
        };
        let n = r.get("replays").and_then(Json::seed).ok_or("flake")?;
        let k = r.get("fails").and_then(Json::seed).ok_or("flake")?;
        let bounds = match r.get("interval") {
            Some(Json::Arr(b)) if b.len() == 2 => b,
            _ => return Err("flake"),
        };
        let texts = [bounds[0].text(), bounds[1].text()];
        let [Some(lo), Some(hi)] = texts else {
            return Err("flake");
        };
        match (four_digits(&bounds[0]), four_digits(&bounds[1])) {
            (Some(l), Some(h)) if n >= 1 && k <= n && l <= h && h <= 10_000 => {}
            _ => return Err("flake runner counts"),
        }
        Ok(Some((n, k, [lo.to_string(), hi.to_string()])))
    };
    let (local, remote) = (role("local")?, role("remote")?);
    let counts = |r: &Option<RoleFacts>| r.as_ref().map_or((0, 0), |r| (r.0, r.1));
    if class != flake_class(&[counts(&local), counts(&remote)]) {
        return Err("flake class");
    }
    Ok(FlakeFacts {
        class,
        seed,
        local,
        remote,
    })
}

/// A citation a strict reader may accept, or why not. Reading:
/// * schema 3 (with `flake`, see [`flake_facts`]) or 2 (`flake` optional, read when given); required strings are non-empty; digest and pin are 64
///   lowercase hex; the two times are RFC 3339 ([`is_rfc3339`]); unknown members are ignored;
/// * SPEC "Same-seed review": after a passed review "the citation names that pair (`fail_id`,
///   `pass_id`, `seed`)", so `same_seed_review: "passed"` needs a seed. A waived citation may
///   name one or not (the format says it is absent then; a reader need not insist);
/// * optional members (`seed`, `code_base`, `key_id`, `sig`) may be absent or null;
/// * `key_id` is a non-empty string (the format says no more of it; a key the trust file
///   declares follows the id rule, but a reader without one has nothing to look it up in);
///   `sig` is 128 lowercase hex (the trust file's documented text form of a signature), and
///   names its signer: a `sig` without a `key_id` is signed by no key the file can name.
pub fn citation(text: &str) -> Result<CitationFacts, &'static str> {
    let doc = match json::read(text.as_bytes()) {
        Read::NotJson(..) => return Err("not JSON"),
        Read::TooDeep => return Err("too deep"),
        Read::Doc(d) => d,
    };
    if !doc.is_object() {
        return Err("not an object");
    }
    if doc.repeats_a_key() {
        return Err("repeated key");
    }
    let flake = match doc.get("flake") {
        None | Some(Json::Null) => None,
        Some(v) => Some(flake_facts(v)?),
    };
    // The record is of the cited fail row's seed: the pair's, when the citation names one.
    if let (Some(f), Some(Some(seed))) = (
        &flake,
        doc.get("seed")
            .filter(|v| !matches!(v, Json::Null))
            .map(Json::seed),
    ) && f.seed != seed
    {
        return Err("flake seed");
    }
    match (doc.get("schema_version").and_then(Json::seed), &flake) {
        (Some(2), _) | (Some(3), Some(_)) => {}
        (Some(3), None) => return Err("schema 3 without flake"),
        _ => return Err("schema_version"),
    }
    let s = |k: &'static str| doc.get(k).and_then(non_empty).map(str::to_string).ok_or(k);
    let hex = |k: &'static str| s(k).and_then(|v| if is_hex64(&v) { Ok(v) } else { Err(k) });
    let time = |k: &'static str| s(k).and_then(|v| if is_rfc3339(&v) { Ok(v) } else { Err(k) });
    let seed = match doc.get("seed") {
        None | Some(Json::Null) => None,
        Some(v) => Some(v.seed().ok_or("seed")?),
    };
    let waived = match doc.get("same_seed_review").and_then(Json::text) {
        Some("passed") => false,
        Some("waived") => true,
        _ => return Err("same_seed_review"),
    };
    if !waived && seed.is_none() {
        return Err("a passed review names no seed");
    }
    let code_base = match doc.get("code_base") {
        None | Some(Json::Null) => None,
        Some(v) => Some(v.text().ok_or("code_base")?.to_string()),
    };
    let key_id = match doc.get("key_id") {
        None | Some(Json::Null) => None,
        Some(v) => Some(non_empty(v).ok_or("key_id")?.to_string()),
    };
    let sig = match doc.get("sig") {
        None | Some(Json::Null) => None,
        Some(v) => Some(
            v.text()
                .filter(|t| signature_bytes(t).is_some())
                .ok_or("sig")?
                .to_string(),
        ),
    };
    if sig.is_some() && key_id.is_none() {
        return Err("a sig that names no key_id");
    }
    Ok(CitationFacts {
        patch_id: s("patch_id")?,
        property_id: s("property_id")?,
        property_digest: hex("property_digest")?,
        fixture_pin: hex("fixture_pin")?,
        bound: s("bound")?,
        signature: s("signature")?,
        fail_id: s("fail_id")?,
        pass_id: s("pass_id")?,
        seed,
        waived,
        code: s("code")?,
        code_base,
        expires_at: time("expires_at")?,
        written_at: time("written_at")?,
        key_id,
        sig,
        flake,
    })
}

/// RFC 3339 §5.6 `date-time`, with §5.7's ranges (a day that exists in its month, hours
/// 00-23, minutes 00-59, seconds 00-60, offsets up to 23:59). Reading: §5.6's note lets
/// `t`, `z` and a space stand for `T`, `Z` and the separator; nothing may surround the time.
pub fn is_rfc3339(s: &str) -> bool {
    let b = s.as_bytes();
    let num = |at: usize, len: usize| -> Option<u32> {
        let d = b.get(at..at + len)?;
        d.iter()
            .all(u8::is_ascii_digit)
            .then(|| d.iter().fold(0, |n, &c| n * 10 + u32::from(c - b'0')))
    };
    let at = |i: usize, c: &[u8]| b.get(i).is_some_and(|x| c.contains(x));
    let (Some(year), Some(month), Some(day), Some(hour), Some(minute), Some(second)) = (
        num(0, 4),
        num(5, 2),
        num(8, 2),
        num(11, 2),
        num(14, 2),
        num(17, 2),
    ) else {
        return false;
    };
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt ") && at(13, b":") && at(16, b":")) {
        return false;
    }
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let days = match month {
        1 | 3 | 5 | 7 | 8 | 10 | 12 => 31,
        4 | 6 | 9 | 11 => 30,
        2 if leap => 29,
        2 => 28,
        _ => return false,
    };
    if day == 0 || day > days || hour > 23 || minute > 59 || second > 60 {
        return false;
    }
    let mut i = 19;
    if at(i, b".") {
        i += 1;
        let from = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == from {
            return false;
        }
    }
    match b.get(i) {
        Some(b'Z' | b'z') => i + 1 == b.len(),
        Some(b'+' | b'-') => {
            i + 6 == b.len()
                && at(i + 3, b":")
                && num(i + 1, 2).is_some_and(|h| h <= 23)
                && num(i + 4, 2).is_some_and(|m| m <= 59)
        }
        _ => false,
    }
}

// ---------------------------------------------------------------------------------------
// Signed citations (`authenticate_citation`): SPEC "Who may cite"; the canonical bytes and
// the file name as `Citation`'s `# Canonical bytes and file name` and the canonical form's
// documentation define them; the trust file's roles as its `# Format` says.

/// One key a trust file declares (the oracle is told them; it does not read the file).
#[derive(Debug, Clone)]
pub struct TrustKey {
    pub key_id: String,
    /// `local`, `remote` or `citer`.
    pub role: &'static str,
    pub public_key: VerifyingKey,
}

/// How a citation that may be honoured stands (SPEC "Who may cite").
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Standing {
    /// Its `sig` verifies under the trust file's `citer` key of this id.
    Signed(String),
    /// There is no trust file: honoured, and every view says `unauthenticated citation`.
    Unauthenticated,
}

/// Why a stored citation is `invalid`: the rule that refused it, and for a text that is not
/// a citation at all, what [`citation`] said.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Refusal {
    pub rule: &'static str,
    pub detail: &'static str,
}

pub const NOT_A_CITATION: &str = "not a citation";
pub const ID_RULE: &str = "property id outside the id rule";
pub const NAME: &str = "file name does not match the text";
pub const UNSIGNED: &str = "unsigned";
pub const UNDECLARED: &str = "key_id names no key of the trust file";
pub const NOT_CITER: &str = "key_id names a key declared for another role";
pub const NO_CANONICAL: &str = "no canonical bytes";
pub const FORGED: &str = "sig does not verify over the canonical bytes";

/// Every rule, in the order the answer is read from (for coverage counts).
pub const SIGNED_RULES: [&str; 8] = [
    NOT_A_CITATION,
    ID_RULE,
    NAME,
    UNSIGNED,
    UNDECLARED,
    NOT_CITER,
    NO_CANONICAL,
    FORGED,
];

/// What the oracle knows of one stored citation, read once; the signature is checked only
/// when a rule asks (it is the one costly fact).
struct Stored<'a> {
    reading: Result<CitationFacts, &'static str>,
    id_ok: bool,
    name_ok: bool,
    /// The declaration `key_id` names, whatever its role.
    key: Option<&'a TrustKey>,
    canonical: Option<Vec<u8>>,
    verified: OnceCell<bool>,
}

impl Stored<'_> {
    fn facts(&self) -> Option<&CitationFacts> {
        self.reading.as_ref().ok()
    }

    fn verified(&self) -> bool {
        *self.verified.get_or_init(
            || match (self.key, self.canonical.as_deref(), self.facts()) {
                (Some(key), Some(bytes), Some(c)) => c
                    .sig
                    .as_deref()
                    .is_some_and(|sig| verifies(&key.public_key, bytes, sig)),
                _ => false,
            },
        )
    }
}

/// `(rule, refuses)`: the first rule that refuses a citation says why it is `invalid`.
type StoredRule = (&'static str, fn(&Stored<'_>) -> bool);

/// Without a trust file: "citations are honoured" when they are citations whose property
/// id can name a file (the store names files by it).
const WITHOUT_TRUST: [StoredRule; 2] = [
    (NOT_A_CITATION, |s| s.facts().is_none()),
    (ID_RULE, |s| !s.id_ok),
];

/// With a trust file: "honoured only if its signature verifies against a `citer` key of
/// that file and its file name matches its content".
const WITH_TRUST: [StoredRule; 8] = [
    (NOT_A_CITATION, |s| s.facts().is_none()),
    (ID_RULE, |s| !s.id_ok),
    (NAME, |s| !s.name_ok),
    (UNSIGNED, |s| {
        s.facts()
            .is_some_and(|c| c.key_id.is_none() || c.sig.is_none())
    }),
    (UNDECLARED, |s| s.key.is_none()),
    (NOT_CITER, |s| s.key.is_some_and(|k| k.role != "citer")),
    (NO_CANONICAL, |s| s.canonical.is_none()),
    (FORGED, |s| !s.verified()),
];

/// SPEC "Who may cite" for one file of the store: `text` its whole text, `file_name` its
/// name, `trust` the keys the repository's trust file declares, when it has one.
pub fn authenticate(
    text: &str,
    file_name: &str,
    trust: Option<&[TrustKey]>,
) -> Result<(CitationFacts, Standing), Refusal> {
    let reading = citation(text);
    let facts = reading.as_ref().ok();
    let canonical = match (facts, json::read(text.as_bytes())) {
        (Some(_), Read::Doc(doc)) => canonical_without_sig(&doc),
        _ => None,
    };
    let stored = Stored {
        id_ok: facts.is_some_and(|c| follows_id_rule(&c.property_id)),
        name_ok: facts
            .is_some_and(|c| citation_file_name(&c.property_id, &c.written_at, text) == file_name),
        key: facts
            .and_then(|c| c.key_id.as_deref())
            .and_then(|id| trust?.iter().find(|k| k.key_id == id)),
        canonical,
        verified: OnceCell::new(),
        reading,
    };
    let rules: &[StoredRule] = if trust.is_some() {
        &WITH_TRUST
    } else {
        &WITHOUT_TRUST
    };
    if let Some((rule, _)) = rules.iter().find(|(_, refuses)| refuses(&stored)) {
        let detail = stored.reading.as_ref().err().copied().unwrap_or("");
        return Err(Refusal { rule, detail });
    }
    let standing = match (trust, stored.key) {
        (Some(_), Some(key)) => Standing::Signed(key.key_id.clone()),
        _ => Standing::Unauthenticated,
    };
    let facts = stored.reading.map_err(|detail| Refusal {
        rule: NOT_A_CITATION,
        detail,
    })?;
    Ok((facts, standing))
}

/// The id rule (the trust file's `key_id`, and every id that names a file): ASCII letters,
/// digits, `.`, `_` and `-`, the first a letter or a digit, at most 128 of them.
pub fn follows_id_rule(id: &str) -> bool {
    let allowed = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
    let mut chars = id.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphanumeric())
        && chars.clone().all(allowed)
        && id.chars().count() <= 128
}

/// The name of the store's file holding `text`: `<property_id>.<written_at's ASCII letters
/// and digits>.<the first 8 hex digits of the SHA-256 of the whole text>.json`.
pub fn citation_file_name(property_id: &str, written_at: &str, text: &str) -> String {
    let stamp: String = written_at
        .chars()
        .filter(char::is_ascii_alphanumeric)
        .collect();
    let digest = Sha256::digest(text.as_bytes());
    let hex: String = digest.iter().take(4).map(|b| format!("{b:02x}")).collect();
    format!("{property_id}.{stamp}.{hex}.json")
}

/// A `sig`'s 64 bytes: exactly 128 lowercase hex digits.
pub fn signature_bytes(sig: &str) -> Option<[u8; 64]> {
    let digit = |c: u8| match c {
        b'0'..=b'9' => Some(c - b'0'),
        b'a'..=b'f' => Some(c - b'a' + 10),
        _ => None,
    };
    let b = sig.as_bytes();
    if b.len() != 128 {
        return None;
    }
    let mut out = [0u8; 64];
    for (i, pair) in b.chunks(2).enumerate() {
        out[i] = digit(pair[0])? * 16 + digit(pair[1])?;
    }
    Some(out)
}

/// Whether `sig` (text form) is `key`'s ed25519 signature of `message`. Reading: "verifies"
/// is RFC 8032 verification in its strict form — no small-order key or `R`, a canonical
/// `S` — which the trust file's format asks of its keys ("not of small order").
pub fn verifies(key: &VerifyingKey, message: &[u8], sig: &str) -> bool {
    signature_bytes(sig).is_some_and(|b| {
        key.verify_strict(message, &Signature::from_bytes(&b))
            .is_ok()
    })
}

/// The canonical bytes of a JSON object without its top-level `sig`: what a citer signs.
/// `None` when `doc` is not an object or holds a value with no canonical form.
pub fn canonical_without_sig(doc: &Json) -> Option<Vec<u8>> {
    let Json::Obj(members) = doc else {
        return None;
    };
    let kept: Vec<(String, Json)> = members
        .iter()
        .filter(|(k, _)| k != "sig")
        .cloned()
        .collect();
    let mut out = String::new();
    write_canonical(&Json::Obj(kept), &mut out)?;
    Some(out.into_bytes())
}

/// Appends the canonical form of `v`: no whitespace; an object's members sorted by their
/// keys' UTF-8 bytes, at every depth; arrays in order; strings as [`write_canonical_str`]
/// spells them; integers as [`canonical_integer`] does; `true`, `false`, `null`.
fn write_canonical(v: &Json, out: &mut String) -> Option<()> {
    match v {
        Json::Null => out.push_str("null"),
        Json::Bool(true) => out.push_str("true"),
        Json::Bool(false) => out.push_str("false"),
        Json::Num(text) => out.push_str(&canonical_integer(text)?),
        Json::Str(s) => write_canonical_str(s, out),
        Json::Arr(items) => {
            let mut sep = "";
            out.push('[');
            for it in items {
                out.push_str(sep);
                write_canonical(it, out)?;
                sep = ",";
            }
            out.push(']');
        }
        Json::Obj(members) => {
            let mut order: Vec<usize> = (0..members.len()).collect();
            order.sort_by(|&a, &b| members[a].0.as_bytes().cmp(members[b].0.as_bytes()));
            let mut sep = "";
            out.push('{');
            for i in order {
                out.push_str(sep);
                write_canonical_str(&members[i].0, out);
                out.push(':');
                write_canonical(&members[i].1, out)?;
                sep = ",";
            }
            out.push('}');
        }
        // Text the reader never makes: no canonical form.
        Json::Raw(_) => return None,
    }
    Some(())
}

/// A string as the canonical form spells it (as serde_json writes strings): `"` and `\`
/// escaped with a backslash; backspace, form feed, line feed, carriage return and tab as
/// `\b \f \n \r \t`; every other character below U+0020 as `\u00xx` with lowercase hex;
/// everything else (`/`, DEL, U+2028, any non-ASCII) as itself.
fn write_canonical_str(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' | '\\' => {
                out.push('\\');
                out.push(c);
            }
            '\u{8}' => out.push_str("\\b"),
            '\u{c}' => out.push_str("\\f"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            '\u{0}'..='\u{1f}' => out.push_str(&format!("\\u{:04x}", u32::from(c))),
            c => out.push(c),
        }
    }
    out.push('"');
}

/// A number's canonical text: an integer written without fraction or exponent, in decimal,
/// from 0 to 2^64-1 without a sign and from -2^63 to -1 with `-`. Anything else (`1.5`, `1e3`,
/// `100.0`, an integer past those ends) has none. Reading: `-0` has none either — the range
/// with a sign ends before zero, and zero is written without one, so no canonical text would
/// say what `-0` said.
pub fn canonical_integer(text: &str) -> Option<String> {
    let (negative, digits) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    if digits.is_empty() || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let magnitude: u128 = digits.parse().ok()?;
    match negative {
        false if magnitude <= u128::from(u64::MAX) => Some(magnitude.to_string()),
        true if (1..=1u128 << 63).contains(&magnitude) => Some(format!("-{magnitude}")),
        _ => None,
    }
}

// ---------------------------------------------------------------------------------------
// Property spec files (`SpecFile::parse`; SPEC "Property spec files").

/// The front matter SPEC's example shows: the four keys the tool reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Front {
    pub property_id: String,
    pub bound: String,
    pub fixture: String,
    pub oracle_source: String,
}

/// A spec file's front matter, or why not. From SPEC and the format documented in the
/// format crate's `spec` module: the file opens with a `---` line; `key: value` lines follow
/// until the next `---` line; the value is the rest of the line after the first colon,
/// trimmed; blank lines and lines starting with `#` are skipped; `property_id`, `bound`,
/// `fixture` and `oracle_source` are required and non-empty; `oracle_source` is
/// `human_reviewed` or `model_draft`. Readings: lines end at `\n` with an optional `\r`; a
/// fence may carry trailing whitespace; "trimmed" and "blank" are about Unicode whitespace;
/// a comment line may be indented; a key that appears twice makes the file invalid (SPEC
/// "Duplicate keys" in spirit: which value counts cannot be told).
pub fn spec_file(text: &str) -> Result<Front, &'static str> {
    let mut lines = text.split('\n').map(|l| l.strip_suffix('\r').unwrap_or(l));
    let fence = |l: &str| l.trim_end() == "---";
    if !lines.next().is_some_and(fence) {
        return Err("no opening fence");
    }
    let mut pairs: Vec<(&str, &str)> = Vec::new();
    let mut closed = false;
    for l in lines {
        if fence(l) {
            closed = true;
            break;
        }
        let content = l.trim();
        if content.is_empty() || content.starts_with('#') {
            continue;
        }
        let (key, value) = l.split_once(':').ok_or("a line that is not `key: value`")?;
        pairs.push((key.trim(), value.trim()));
    }
    if !closed {
        return Err("no closing fence");
    }
    let mut keys: Vec<&str> = pairs.iter().map(|(k, _)| *k).collect();
    keys.sort_unstable();
    if keys.windows(2).any(|w| w[0] == w[1]) {
        return Err("a key appears twice");
    }
    let value = |k: &str| {
        pairs
            .iter()
            .find(|(key, _)| *key == k)
            .map(|(_, v)| v.to_string())
            .filter(|v| !v.is_empty())
    };
    let oracle_source = value("oracle_source").ok_or("oracle_source")?;
    if !matches!(oracle_source.as_str(), "human_reviewed" | "model_draft") {
        return Err("oracle_source is neither value");
    }
    Ok(Front {
        property_id: value("property_id").ok_or("property_id")?,
        bound: value("bound").ok_or("bound")?,
        fixture: value("fixture").ok_or("fixture")?,
        oracle_source,
    })
}
