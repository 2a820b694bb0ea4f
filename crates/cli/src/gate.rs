//! `cargo xtask gate ...`: close receipts, count them per patch, decide freezes, write
//! citations, print pins and digests. Thin: reads files, computes the expected digest and pin
//! from the checked-in spec and fixture files, reads the clock for a citation's `written_at`
//! (the gate crate reads none), calls `seedledger-gate`, prints, and maps outcomes to exit
//! codes (0 yes, 1 no, 2 error).

use crate::freezes::Currents;
use crate::gate_json::{
    self, CiteLine, CloseLine, CountsLine, DecisionLine, FreezeLine, ReviewJson,
};
use crate::prop::Role;
use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use seedledger_format::{
    Citation, ExitStatus, Receipt, Runner, SpecFile, WitnessLine, fixture_pin, parse_rfc3339,
    property_digest, write_atomic_new,
};
use seedledger_gate::{
    CiteError, CiteFacts, CloseStatus, Closing, Current, Expected, FreezeDecision, OfferedRuns,
    ReceiptFacts, Retirement, Review, close_ledger_bytes, patch_counts, receipt_retirement,
    verify_receipt, witness_lines_from_bytes,
};
use serde_json::Value;
use std::path::{Path, PathBuf};

/// The gate: only a narrow, explicit set of facts lets a failing property be frozen.
#[derive(Debug, Subcommand)]
pub enum GateCommand {
    /// Print each receipt's status; exit 0 only when every one is freeze_eligible.
    ///
    /// Statuses, first match wins (SPEC: Gate decision 1): incomplete_fields, empty_plan,
    /// early_stop_incomplete, seed_gap, budget_pass_no_freeze, seed_mismatch,
    /// oracle_unreviewed, shrink_unstable, fixture_unbound, freeze_eligible.
    ///
    /// Output, one result per file, in the order given. Human: `<file>: <status>`, followed by
    /// `(<why>)` when the receipt is not freeze_eligible. JSON (`--format json`): one object
    /// per line, `{"file": "<path as given>", "status": "<status>", "detail": "<why>"}`; a file
    /// that cannot be read or is not JSON gets `{"file": ..., "status": null, "error": ...}`.
    ///
    /// Exit status: 0 every receipt is freeze_eligible; 1 at least one is not; 2 a file
    /// cannot be read or is not JSON (stderr names the file, line and column; the other files
    /// are still closed).
    #[command(verbatim_doc_comment)]
    Close(CloseArgs),

    /// Decide whether witness rows admit a freeze citation; print the reason. Writes nothing.
    ///
    /// The expected property digest is the SHA-256 of the spec file's bytes (default
    /// `props/<ID>.md` under the root), the expected fixture pin is computed from the fixture
    /// file's bytes (default: the spec's `fixture:` line, relative to the root) and the bound
    /// defaults to the spec's `bound:` line. Nothing expected is ever taken from the rows.
    ///
    /// Reasons, first match wins (SPEC: Gate decision 2):
    ///   remote witness <id> attempted to mint
    ///   malformed witness <id>            (<id> is `line <N>` when the row has no witness_id)
    ///   need two witnesses on the same pin, digest, and bound
    ///   opposite verdicts required
    ///   fail signature is not stable
    ///   need both a local witness and a remote witness
    ///   fail witness cannot carry an ok signature
    ///   stable signature across opposite verdicts   (the only admit)
    ///
    /// Runner roles: where ROOT/props/trusted-runners.jsonl declares trusted runner keys, a
    /// remote row without a valid `sig` by a key declared for `remote` is malformed (see
    /// `cargo xtask keys --help`); without that file a note says roles are unauthenticated.
    ///
    /// Output. Human: the reason, verbatim, on the first line; on admit `fail_id: <id>` and
    /// `pass_id: <id>` follow; then one line with what the citation writer's same-seed review
    /// would say over the rows in scope (`same-seed review: passed: fail <id> and pass <id>
    /// on seed N` or `same-seed review: no pass on a failing seed: opposite verdicts came
    /// from different inputs`; it changes neither the decision nor the exit status). Notes on stderr say what was expected and which file and line
    /// decided a refusal. JSON (`--format json`): the last stdout line is
    /// `{"admit": <bool>, "reason": "<reason>", "fail_id": <id or null>, "pass_id": <id or null>,
    ///   "roles": "authenticated" | "unauthenticated", ...}`.
    ///
    /// Exit status: 0 admitted; 1 refused; 2 unreadable input (a missing witness, spec or
    /// fixture file, a spec whose front matter is bad, a spec for another property).
    #[command(verbatim_doc_comment)]
    Decide(DecideArgs),

    /// Decide as `gate decide` does, check the patch's receipts, run the same-seed review,
    /// and only then write a citation into the freeze store.
    ///
    /// A citation (the freeze file) is written only when every check passes, in this order
    /// (SPEC: Citation; Same-seed review; Per-patch counts and retirement):
    ///   1. the writer is local (`--runner local`, the default; a remote runner has no path
    ///      to write one);
    ///   2. an expiry from policy is given (`--expires-at`), RFC 3339, in the future;
    ///   3. the receipts name one patch (every `*.receipt.json` beside the given ones is
    ///      included: the caller cannot leave an open receipt out);
    ///   4. the witness rows admit, exactly as `gate decide` says (same flags, same reason);
    ///   5. no receipt of the patch disagrees with its run's witness rows (as
    ///      `gate close --verify` checks: a hand-edited receipt refuses);
    ///   6. the patch has no open receipt (incomplete_fields, empty_plan,
    ///      early_stop_incomplete, seed_gap) that is still current;
    ///   7. a receipt of the property is freeze_eligible against the current fixture and the
    ///      current code identity (its `code`, recomputed with its `code_base`); receipts of
    ///      another fixture or code are retired and never count;
    ///   8. the same-seed review: among the rows in scope carrying the patch's `patch_id` and
    ///      that `code`, a fail and a pass share a seed — else refused with
    ///      `no pass on a failing seed: opposite verdicts came from different inputs` (or
    ///      `the cited fail and pass rows must come from the patch being cited and its code
    ///      identity`). `--waive-same-seed-review` skips the seed part, explicitly, and the
    ///      citation records `same_seed_review: waived`.
    ///
    /// The citation (schema 2) names the patch, property, digest, pin, bound, the frozen
    /// failure signature, fail_id and pass_id (the same-seed pair) and their seed, the review,
    /// the code identity and its base, expires_at (written in UTC) and written_at. It is
    /// written atomically into `--store` (default ROOT/props/freezes) under a new name
    /// `<property>.<written_at>.<8 hex>.json`, never over an existing file: a citation is
    /// never refreshed or extended; `prop run` honours it while it is active (`gate freezes`).
    ///
    /// Output. Human: the decision reason, verbatim, on the first line; on admit `fail_id:`
    /// and `pass_id:` lines (the decision's); then the review the writer ran
    /// (`same-seed review: passed: ...`, `... waived: ...`, a refusal, or `not reached` when
    /// an earlier check refused); then `citation written: <file>` or
    /// `citation refused: <why>`. Notes on stderr name the expected values, every receipt's
    /// status, retirement and cross-check, and whether runner roles are authenticated. JSON
    /// (`--format json`): the last stdout line is
    /// `{"written": <bool>, "reason": "<decision reason>", "refusal": <why or null>,
    ///   "review_reason": <review refusal or null>, "citation": <file or null>,
    ///   "fail_id": <id or null>, "pass_id": <id or null>,
    ///   "same_seed_review": {"passed", "reason", "fail_id", "pass_id", "seed"} or null,
    ///   "roles": "authenticated" | "unauthenticated"}`.
    ///
    /// Exit status: 0 the citation was written; 1 refused (a remote writer, no expiry, the
    /// decision refused, a receipt that disagrees with its rows, an open receipt, no current
    /// eligible receipt, no code identity, the same-seed review); 2 error (an expiry that is
    /// not RFC 3339 or not in the future, receipts of more than one patch or without a
    /// patch_id, an unreadable receipt, witness, spec or fixture file, a failed write).
    ///
    /// Example:
    ///   cargo xtask gate cite --property order_total_nonneg \
    ///     --witnesses evidence/local/pr-7/order_total_nonneg.witness.jsonl \
    ///                 evidence/remote/pr-7/order_total_nonneg.witness.jsonl \
    ///     --receipts evidence/local/pr-7/*.receipt.json --expires-at 2030-01-01T00:00:00Z
    #[command(verbatim_doc_comment)]
    Cite(CiteArgs),

    /// Count receipts per patch: open receipts, closed failures, budget passes.
    ///
    /// Every receipt is closed (as `gate close` does) and counted for the patch named by its
    /// patch_id: open = incomplete_fields, empty_plan, early_stop_incomplete or seed_gap (the
    /// declared budget did not provably finish); closed failure = seed_mismatch ..
    /// freeze_eligible; budget pass = budget_pass_no_freeze. The freeze path of a patch is
    /// enabled only while it has no open receipt (SPEC: Per-patch counts and retirement).
    /// A receipt whose fixture hash or code identity (recomputed with its `code_base`) no
    /// longer matches the work tree at `--root` is retired: named on stderr, counted as
    /// `retired` and in none of the three counts (when what is current cannot be computed,
    /// nothing retires).
    ///
    /// Output, one line per patch, sorted by patch id. Human:
    /// `<patch>: open <n>, closed failures <n>, budget passes <n>[, retired <n>]; freeze path enabled|disabled`;
    /// stderr names each open receipt and why it is open. JSON (`--format json`): one object
    /// per patch per line, `{"patch_id": "<id>", "open_receipts": <n>, "closed_failures": <n>,
    /// "budget_passes": <n>, "retired_receipts": <n>, "freeze_enabled": <bool>}`.
    ///
    /// Exit status: 0 no patch has an open receipt; 1 some patch has one; 2 a receipt cannot
    /// be read, is not JSON or has no patch_id (stderr names it; the others are still counted).
    #[command(verbatim_doc_comment)]
    Counts(CountsArgs),

    /// List every citation in the freeze store with its state.
    ///
    /// States (SPEC: Freeze store and honoured freezes), first match wins: `retired (spec
    /// changed)` (props/<id>.md no longer has the cited digest, or is gone), `retired (fixture
    /// changed)`, `retired (diff changed)` (the work tree's code identity, computed against the
    /// citation's own base revision — or HEAD — is not the cited one), `expired`, `active`.
    /// Only `active` citations are honoured by `prop run`. A file that is not a valid citation
    /// is listed as `invalid (<why>)` (never honoured); where props/trusted-runners.jsonl
    /// exists, so is a citation whose signature does not verify under one of its `citer` keys
    /// or whose file name does not match its text (SPEC: Who may cite). Without a trust file
    /// every citation is an `unauthenticated citation`, and each line says so.
    ///
    /// Output, one line per file, sorted by name. Human: `<file>: <state>` followed by the
    /// property, frozen signature, expiry, patch, review and `signed by citer key `<id>`` or
    /// `unauthenticated citation`. JSON (`--format json`): one object per line,
    /// `{"citation": <file>, "state": <state>, "property_id", "signature", "expires_at",
    /// "patch_id", "seed", "same_seed_review", "authenticity": "signed"|"unauthenticated",
    /// "key_id" (signed only), "error": null}`; an invalid file gives `{"citation": <file>,
    /// "state": "invalid", "error": "<why>"}`.
    ///
    /// With `--base REV`: what the work tree changes about freezing against REV instead (see
    /// `--base`).
    ///
    /// Exit status: 0 listed; 2 the store or trust file cannot be read, a file is invalid, or
    /// the clock is before 1970 or before the newest citation was written. With `--base`: 0 no
    /// change fails the job, 1 one does, 2 git or a file cannot be read.
    #[command(verbatim_doc_comment)]
    Freezes(FreezesArgs),

    /// Combine the part receipts of one property's split plan (`prop run --partition`) into
    /// one receipt whose planned_seeds is the whole plan.
    ///
    /// Each part's receipt is read with the `<property>.witness.jsonl` beside it and checked
    /// against its own rows (as `gate close --verify` does). The merged receipt lists the
    /// whole plan in planned_seeds; attempted_seeds, verdicts and failing_seeds are the parts'
    /// in whole-plan order; failing_seed is the first failing seed in that order, with its
    /// part's shrink result (shrink_stable, shrink, minimal input); failure modes are summed;
    /// stopped_early is true when any part stopped early. It has a new run_id and records its
    /// parts (`merge`: index, run_id, receipt digest). The merged witness file is the parts'
    /// witness files one after another, byte for byte (signed rows stay valid), so
    /// `gate close --verify`, `gate decide` and `gate cite` read the merged evidence as they
    /// read a single run's.
    ///
    /// A part not given leaves its seeds unattempted (the merged receipt closes as seed_gap,
    /// and the output names the missing parts); a part that stopped early leaves it
    /// early_stop_incomplete. Refused (nothing written, exit 1), with the reason: parts of
    /// another property, patch, fixture hash, property digest, bound, rng scheme, code
    /// identity (`code`), runner or whole plan; another partition kind or number of parts; a
    /// part given twice; a receipt that is not a part or whose seeds are not its part of the
    /// plan; a part that disagrees with its witness rows.
    ///
    /// Output. Human: `merged M of N parts of ID (A of P planned seeds attempted) into FILE`,
    /// `witness rows: FILE`, then `FILE: <status>` as `gate close` prints it, and one `open:
    /// <why>` line per reason it is open; or `merge refused: <why>`. JSON (`--format json`):
    /// one line `{"merged", "refusal", "receipt", "witnesses", "status", "detail", "open",
    /// "parts", "total"}`.
    ///
    /// Exit status: 0 merged, and the merged receipt is not open; 1 refused, or merged but
    /// open (seed_gap, early_stop_incomplete, ...); 2 a file cannot be read or is not a receipt
    /// (named), a missing witness file, a failed write.
    #[command(verbatim_doc_comment)]
    Merge(crate::merge::MergeArgs),

    /// Print the fixture hash of FILE as receipts carry it: `sha256:` followed by the pin,
    /// sha256(b"fixture-v1\n" ++ bytes) in lowercase hex (`--bare`: the pin alone, as witness
    /// rows and citations carry it).
    ///
    /// Exit 2 when FILE cannot be read.
    Pin {
        /// The fixture file.
        file: PathBuf,
        /// Print the bare 64-hex pin, without `sha256:`.
        #[arg(long)]
        bare: bool,
    },

    /// Print the property digest of FILE: sha256 of the spec file's bytes, lowercase hex.
    ///
    /// Exit 2 when FILE cannot be read.
    Digest {
        /// The property spec file (`props/<id>.md`).
        file: PathBuf,
    },
}

/// Output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// Lines for people and CI logs.
    Human,
    /// JSON Lines for tools.
    Json,
}

#[derive(Debug, Args)]
pub struct CloseArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Receipt files (JSON), one result each.
    #[arg(required = true, value_name = "FILE")]
    files: Vec<PathBuf>,
    /// Also cross-check each receipt against its run's witness rows (the file
    /// `<property_id>.witness.jsonl` beside it, rows of the receipt's `run_id`): attempted
    /// seeds, verdicts, failing seeds and failure modes must agree. A disagreement (a
    /// hand-edited receipt or row) is printed and makes the exit status at least 1.
    #[arg(long)]
    verify: bool,
}

#[derive(Debug, Args)]
pub struct DecideArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    expect: ExpectArgs,
}

#[derive(Debug, Args)]
pub struct CiteArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    #[command(flatten)]
    expect: ExpectArgs,
    /// Every receipt (JSON) of the patch being cited; all must name the same patch_id.
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    receipts: Vec<PathBuf>,
    /// When the citation stops being honoured, from policy: RFC 3339, e.g.
    /// 2030-01-01T00:00:00Z; must be in the future. Without it the citation is refused.
    #[arg(long, value_name = "RFC3339")]
    expires_at: Option<String>,
    /// The freeze store the citation is written into, under a new file name
    /// [default: ROOT/props/freezes]. `prop run` honours the citations it finds there.
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// Cite without the same-seed review, for suites whose noise is not the seed (timing,
    /// the network). Explicit, and recorded in the citation as `same_seed_review: waived`.
    #[arg(long)]
    waive_same_seed_review: bool,
    /// Who is asking to write: only a local runner may write a citation.
    #[arg(long, value_enum, default_value_t = Role::Local)]
    runner: Role,
    /// The citer's secret key, in a file only its owner may read (mode 600) [default: the
    /// key in $SEEDLEDGER_CITER_KEY]. Required where props/trusted-runners.jsonl exists: the
    /// citation is signed with it, and only citations signed by a `citer` key of that file
    /// are honoured.
    #[arg(long, value_name = "FILE")]
    key_file: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct CountsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Receipt files (JSON) of one or more patches.
    #[arg(required = true, value_name = "RECEIPT")]
    files: Vec<PathBuf>,
    /// The workspace root whose specs, fixtures and git work tree say what is current
    /// [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct FreezesArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// The freeze store [default: ROOT/props/freezes].
    #[arg(long, value_name = "DIR")]
    store: Option<PathBuf>,
    /// The workspace root whose specs, fixtures and git work tree say what is current
    /// [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Judge expiry at this RFC 3339 time instead of now (which freezes will have expired
    /// by then?).
    #[arg(long, value_name = "RFC3339")]
    at: Option<String>,
    /// Instead of the list, what the work tree changes about freezing against this base
    /// revision: citations added (each authenticated against the base's trust file), edited
    /// or removed, and trust-file lines added or removed. Exit 1 when a citation is edited or
    /// removed, an added one does not verify or names evidence another file names, or one the
    /// base refuses would be honoured under the patch's trust file (`ci gate` runs this).
    #[arg(long, value_name = "REV", conflicts_with = "at")]
    base: Option<String>,
}

/// What the witness rows are decided against: the flags `gate decide` and `gate cite` share.
#[derive(Debug, Args)]
pub struct ExpectArgs {
    /// The property id the rows must name (and the spec's `property_id`).
    #[arg(long, value_name = "ID")]
    property: String,
    /// Witness files (JSON Lines); rows of all files form one batch, in the order given.
    #[arg(long, required = true, num_args = 1.., value_name = "FILE")]
    witnesses: Vec<PathBuf>,
    /// The property spec file whose bytes give the expected digest [default: ROOT/props/ID.md].
    #[arg(long, value_name = "PATH")]
    spec: Option<PathBuf>,
    /// The fixture file whose bytes give the expected pin [default: ROOT/<spec's `fixture:`>].
    #[arg(long, value_name = "PATH")]
    fixture: Option<PathBuf>,
    /// The expected bound [default: the spec's `bound:`].
    #[arg(long, value_name = "TEXT")]
    bound: Option<String>,
    /// The workspace root that the defaults are relative to [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

/// Runs one gate command and returns its exit status. Never panics on any input.
pub fn run(cmd: GateCommand) -> ExitStatus {
    match cmd {
        GateCommand::Close(args) => close(&args),
        GateCommand::Decide(args) => or_error(decide(&args)),
        GateCommand::Cite(args) => or_error(cite(&args)),
        GateCommand::Counts(args) => counts(&args),
        GateCommand::Freezes(args) => freezes(&args),
        GateCommand::Merge(args) => crate::merge::merge(&args),
        GateCommand::Pin { file, bare: true } => print_hash(&file, "fixture", fixture_pin),
        GateCommand::Pin { file, bare: false } => print_hash(&file, "fixture", |b| {
            seedledger_format::fixture_hash_from_pin(&fixture_pin(b))
        }),
        GateCommand::Digest { file } => print_hash(&file, "spec", property_digest),
    }
}

/// Prints an error at the edge and turns it into exit status 2.
fn or_error(res: anyhow::Result<ExitStatus>) -> ExitStatus {
    res.unwrap_or_else(|e| {
        err_line(&format!("error: {e:#}"));
        ExitStatus::Error
    })
}

/// One receipt file, closed, with the fields that say whose it is.
struct ReadReceipt {
    /// The path as given on the command line.
    shown: String,
    /// Its index among the files read (`gate cite`).
    index: usize,
    closing: Closing,
    /// `patch_id`, when it is a non-empty string.
    patch_id: Option<String>,
    /// `property_id`, when it is a non-empty string.
    property_id: Option<String>,
    /// `fixture_hash`, when it is a string.
    fixture_hash: Option<String>,
    /// `code` and `code_base` (extensions), when they are non-empty strings.
    code: Option<String>,
    code_base: Option<String>,
    /// Why the receipt disagrees with its run's rows (set where that is checked).
    disagreement: Option<String>,
    /// The receipt's `run_id`.
    run_id: Option<String>,
    /// A merged receipt's parts' run ids (read beside it).
    part_runs: Vec<String>,
    /// Where the rows its own run wrote are (read beside it), when they agree with it and the
    /// receipt is current: kept as fingerprints in `cite_stream::OwnRows`.
    own: Option<(PathBuf, Vec<String>)>,
    /// Every run (not a replay) with local rows of the patch in the witness file beside it.
    runs_beside: Vec<String>,
    /// The receipt's `failing_seeds` (when it reads strictly).
    failing_seeds: Vec<u64>,
    /// `rng` (extension: the run's scheme), when it is a non-empty string.
    rng: Option<String>,
}

/// Reads and closes one receipt. `Err` (a message naming the file, and the line and column
/// when it is not JSON) only when the file cannot be read or is not JSON at all.
///
/// The receipt is scanned as a stream (`seedledger_gate::close_scan`: its seed lists are
/// never held); one the scan does not read — bad UTF-8 or JSON, a repeated key, a malformed
/// decision field — is read whole as before, so its error or `incomplete_fields` detail is
/// word for word what it was (and so is a receipt that cannot be opened or read).
fn read_receipt(file: &Path) -> Result<ReadReceipt, String> {
    let shown = file.display().to_string();
    if let Some(read) = crate::gate_stream::scan_receipt(file) {
        return Ok(ReadReceipt::identified(shown, read.closing, |key| {
            read.others.get(key)
        }));
    }
    let bytes = read_bounded(file, "receipt", MAX_RECEIPT_BYTES).map_err(|e| format!("{e:#}"))?;
    let closing = close_ledger_bytes(&bytes).map_err(|e| format!("receipt `{shown}`: {e}"))?;
    // The bytes are JSON (close_ledger_bytes said so); a value that is not an object has no
    // identity fields.
    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    Ok(ReadReceipt::identified(shown, closing, |key| {
        value.get(key)
    }))
}

impl ReadReceipt {
    /// A receipt closed as `closing`, identified by its top-level string fields (`field`
    /// gives one by name; a missing, empty or non-string one is `None`); nothing read
    /// beside it yet.
    fn identified<'v>(
        shown: String,
        closing: Closing,
        field: impl Fn(&str) -> Option<&'v Value>,
    ) -> ReadReceipt {
        let text = |key: &str| {
            field(key)
                .and_then(Value::as_str)
                .filter(|s| !s.is_empty())
                .map(str::to_string)
        };
        ReadReceipt {
            patch_id: text("patch_id"),
            property_id: text("property_id"),
            fixture_hash: text("fixture_hash"),
            code: text("code"),
            code_base: text("code_base"),
            disagreement: None,
            run_id: text("run_id"),
            part_runs: Vec::new(),
            own: None,
            runs_beside: Vec::new(),
            failing_seeds: Vec::new(),
            rng: text("rng"),
            index: 0,
            shown,
            closing,
        }
    }
}

fn no_patch_id(shown: &str) -> String {
    format!(
        "receipt `{shown}`: field `patch_id`: missing, empty or not a string; cannot tell which patch the receipt belongs to"
    )
}

fn close(args: &CloseArgs) -> ExitStatus {
    let mut worst = ExitStatus::Success;
    for file in &args.files {
        match read_receipt(file) {
            Ok(ReadReceipt { shown, closing, .. }) => {
                let eligible = closing.status == CloseStatus::FreezeEligible;
                if !eligible {
                    worst = worst.max(ExitStatus::No);
                }
                let verified = args.verify.then(|| verify_beside(file));
                if let Some(Err(_)) = &verified {
                    worst = worst.max(ExitStatus::No);
                }
                match args.format {
                    Format::Human => {
                        if eligible {
                            out_line(&format!("{shown}: {}", closing.status));
                        } else {
                            out_line(&format!("{shown}: {} ({})", closing.status, closing.detail));
                        }
                        match &verified {
                            Some(Ok(agrees)) => {
                                out_line(&format!("{shown}: rows agree ({agrees})"))
                            }
                            Some(Err(why)) => out_line(&format!("{shown}: rows disagree: {why}")),
                            None => {}
                        }
                    }
                    Format::Json => gate_json::print(&CloseLine {
                        file: &shown,
                        status: Some(closing.status.as_str()),
                        detail: Some(&closing.detail),
                        verified: verified.as_ref().map(Result::is_ok),
                        disagreement: verified
                            .as_ref()
                            .map(|v| v.as_ref().err().map(String::as_str)),
                        error: None,
                    }),
                }
            }
            Err(message) => {
                worst = ExitStatus::Error;
                err_line(&format!("error: {message}"));
                if args.format == Format::Json {
                    let shown = file.display().to_string();
                    gate_json::print(&CloseLine {
                        file: &shown,
                        status: None,
                        detail: None,
                        verified: None,
                        disagreement: None,
                        error: Some(&message),
                    });
                }
            }
        }
    }
    worst
}

/// Cross-checks the receipt at `file` against the rows of its run in the witness file beside
/// it. `Ok` says what agreed; `Err` the first disagreement (or why it could not be checked).
/// A receipt read strictly, with the lines of the witness file beside it.
pub(crate) struct Beside {
    pub(crate) receipt: Receipt,
    pub(crate) lines: Vec<WitnessLine>,
    pub(crate) witnesses: PathBuf,
}

/// Reads the receipt at `file` and the witness file beside it (`<property_id>.witness.jsonl`).
pub(crate) fn read_beside(file: &Path) -> Result<Beside, String> {
    let bytes = read_bounded(file, "receipt", MAX_RECEIPT_BYTES).map_err(|e| format!("{e:#}"))?;
    let text = std::str::from_utf8(&bytes).map_err(|_| "the receipt is not UTF-8".to_string())?;
    let receipt = Receipt::parse(text)
        .map_err(|e| format!("not a seedledger receipt, so it cannot be cross-checked: {e}"))?;
    let witnesses = file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
    let rows = read_bounded(&witnesses, "witness file", MAX_WITNESS_BYTES)
        .map_err(|e| format!("{e:#}"))?;
    // A torn last line (a crash in the middle of an append) is no row of anyone's.
    let lines = witness_lines_from_bytes(seedledger_format::complete_lines(&rows));
    Ok(Beside {
        receipt,
        lines,
        witnesses,
    })
}

/// Cross-checks the receipt at `file` against the rows of its run in the witness file beside
/// it. `Ok` says what agreed; `Err` the first disagreement (or why it could not be checked).
fn verify_beside(file: &Path) -> Result<String, String> {
    if let Some(agrees) = crate::gate_stream::verify_beside(file) {
        return Ok(agrees);
    }
    let Beside {
        receipt,
        lines,
        witnesses,
    } = read_beside(file)?;
    verify_receipt(&receipt, &lines)?;
    Ok(format!(
        "{} attempted seeds of run {} in `{}`",
        receipt.attempted_seeds.len(),
        receipt.run_id.as_deref().unwrap_or("?"),
        witnesses.display()
    ))
}

fn counts(args: &CountsArgs) -> ExitStatus {
    let mut errors = false;
    let mut read = Vec::new();
    for file in &args.files {
        match read_receipt(file) {
            Ok(r) => match r.patch_id.clone() {
                Some(patch_id) => read.push((patch_id, r)),
                None => {
                    errors = true;
                    err_line(&format!("error: {}", no_patch_id(&r.shown)));
                }
            },
            Err(message) => {
                errors = true;
                err_line(&format!("error: {message}"));
            }
        }
    }
    let mut currents = Currents::new(&args.root.clone().unwrap_or_else(crate::prop::discover_root));
    let mut judged = Vec::with_capacity(read.len());
    for (patch_id, r) in &read {
        let retired = retirement(&mut currents, r);
        if let Some(why) = retired {
            err_line(&format!(
                "note: patch `{patch_id}`: receipt `{}` is {why}: listed, never counted as evidence",
                r.shown
            ));
        } else if r.closing.status.is_open() {
            err_line(&format!(
                "note: patch `{patch_id}`: receipt `{}` is open: {} ({})",
                r.shown, r.closing.status, r.closing.detail
            ));
        }
        judged.push((patch_id.as_str(), r.closing.status, retired.is_some()));
    }
    let counts = patch_counts(judged);
    let mut any_open = false;
    for c in &counts {
        any_open |= !c.freeze_enabled();
        match args.format {
            Format::Human => out_line(&format!(
                "{}: open {}, closed failures {}, budget passes {}{}; freeze path {}",
                c.patch_id,
                c.open_receipts,
                c.closed_failures,
                c.budget_passes,
                if c.retired > 0 {
                    format!(", retired {}", c.retired)
                } else {
                    String::new()
                },
                if c.freeze_enabled() {
                    "enabled"
                } else {
                    "disabled"
                }
            )),
            Format::Json => gate_json::print(&CountsLine {
                patch_id: &c.patch_id,
                open_receipts: c.open_receipts,
                closed_failures: c.closed_failures,
                budget_passes: c.budget_passes,
                retired_receipts: c.retired,
                freeze_enabled: c.freeze_enabled(),
            }),
        }
    }
    if errors {
        ExitStatus::Error
    } else if any_open {
        ExitStatus::No
    } else {
        ExitStatus::Success
    }
}

fn decide(args: &DecideArgs) -> anyhow::Result<ExitStatus> {
    let x = expectation(&args.expect)?;
    // The witness files are streamed, never held: see `gate_stream`.
    let streamed = crate::gate_stream::decide(&args.expect.witnesses, &x.expected, &x.roles)?;
    x.notes(streamed.lines, &streamed.decision, streamed.culprit);
    // What the citation writer's same-seed review would say (it does not change the
    // decision, nor the exit status: SPEC's decision 2 stays blind to seeds).
    let review = streamed.review;
    let decision = streamed.decision;
    err_line(&format!("note: same-seed review: {}", review.detail));
    print_decision(&decision, &review, x.roles.label(), args.format);
    Ok(if decision.admit {
        ExitStatus::Success
    } else {
        ExitStatus::No
    })
}

/// What witness rows are decided against, computed before any of them is read: the
/// expected digest, pin and bound from the checked-in spec and fixture files, and whether
/// runner roles are authenticated.
struct Expectation {
    expected: Expected,
    spec_path: PathBuf,
    fixture_path: PathBuf,
    roles: crate::trust::Roles,
    /// The spec's `oracle_source` now.
    oracle: seedledger_format::OracleSource,
}

impl Expectation {
    /// The notes on stderr that say what was expected, whether roles are authenticated and
    /// which file decided a refusal.
    fn notes(&self, lines: usize, decision: &FreezeDecision, culprit: Option<&Path>) {
        let expected = &self.expected;
        err_line(&format!(
            "note: expected property `{}`, digest {} (`{}`), pin {} (`{}`), bound `{}`; {} rows read",
            expected.property_id,
            expected.digest,
            self.spec_path.display(),
            expected.pin,
            self.fixture_path.display(),
            expected.bound,
            lines
        ));
        err_line(&self.roles.note());
        match culprit {
            Some(file) => err_line(&format!("note: `{}`: {}", file.display(), decision.detail)),
            None => err_line(&format!("note: {}", decision.detail)),
        }
    }
}

/// Computes the expected digest, pin and bound from the checked-in spec and fixture files and
/// loads the trust file. `Err` is unreadable input.
fn expectation(args: &ExpectArgs) -> anyhow::Result<Expectation> {
    // Without `--root`, defaults are relative paths (shown as `props/ID.md`, not `./props/...`).
    let root = args.root.clone().unwrap_or_else(crate::prop::discover_root);
    let property = args.property.as_str();
    seedledger_format::check_id("property id", property).map_err(|e| anyhow!("--property: {e}"))?;
    let spec_path = match &args.spec {
        Some(path) => path.clone(),
        None => root.join("props").join(format!("{property}.md")),
    };
    let spec_bytes = read_bounded(&spec_path, "spec", MAX_SPEC_BYTES)?;
    let spec_text = std::str::from_utf8(&spec_bytes).map_err(|e| {
        anyhow!(
            "spec `{}`: not UTF-8 (byte {})",
            spec_path.display(),
            e.valid_up_to()
        )
    })?;
    let spec =
        SpecFile::parse(spec_text).map_err(|e| anyhow!("spec `{}`: {e}", spec_path.display()))?;
    if spec.property_id != property {
        bail!(
            "spec `{}`: line {}: property_id is `{}`, but `--property` is `{property}`",
            spec_path.display(),
            key_line(spec_text, "property_id"),
            spec.property_id
        );
    }
    // `fixture: none` (and no `--fixture`): the property reads no file; its bytes are empty.
    let fixture_path = match (&args.fixture, spec.fixture_path()) {
        (Some(path), _) => Some(path.clone()),
        (None, Some(fixture)) => Some(root.join(fixture)),
        (None, None) => None,
    };
    let fixture_bytes = match &fixture_path {
        None => Vec::new(),
        Some(path) => read_bounded(path, "fixture", MAX_FIXTURE_BYTES).with_context(|| {
            format!(
                "the fixture named by spec `{}` (or `--fixture`)",
                spec_path.display()
            )
        })?,
    };
    let fixture_path = fixture_path.unwrap_or_else(|| PathBuf::from(seedledger_format::NO_FIXTURE));
    let expected = Expected {
        property_id: property.to_string(),
        digest: property_digest(&spec_bytes),
        pin: fixture_pin(&fixture_bytes),
        bound: args.bound.clone().unwrap_or_else(|| spec.bound.clone()),
    };

    // With a trust file, remote rows not signed by a declared remote key become malformed.
    let roles = crate::trust::Roles::load(&root)?;
    Ok(Expectation {
        expected,
        spec_path,
        fixture_path,
        roles,
        oracle: spec.oracle_source,
    })
}

/// `gate cite`: the receipts and the witness files beside them, then the batch, read as
/// streams (`cite_stream`): what is held is bounded by the failing seeds, not by the rows.
fn cite(args: &CiteArgs) -> anyhow::Result<ExitStatus> {
    let root = args
        .expect
        .root
        .clone()
        .unwrap_or_else(crate::prop::discover_root);
    let store = crate::freezes::store_dir(&root, args.store.as_deref());
    // Who may cite, first: a trust file needs a citer key; the store's evidence and clock.
    let trust = crate::trust::Roles::load(&root)?;
    let signer = crate::trust::citer_key(&trust, args.key_file.as_deref())?;
    let stored = crate::freezes::read_store(&store, trust.keys()).map_err(|e| anyhow!(e))?;
    let now = crate::freezes::now_checked(&stored).map_err(|e| anyhow!(e))?;
    let shown: Vec<String> = stored
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    let cited = crate::freezes::cited_evidence(&stored, &shown);
    let files = with_neighbours(&args.receipts);
    let mut receipts = read_receipts(&files)?;

    // What is current for each receipt: its property's fixture pin, and the work tree's code
    // identity against the receipt's own base. Notes say how each receipt stands.
    let mut currents = Currents::new(&root);
    let facts_current: Vec<(Option<String>, Option<String>)> = receipts
        .iter()
        .map(|r| current_of(&mut currents, r))
        .collect();
    // Each receipt against its run's rows; the rows of the current ones' runs are the only
    // local rows that may be cited (kept as fingerprints).
    let mut own = crate::cite_stream::OwnRows::new()?;
    for (index, (r, (pin, code))) in receipts.iter_mut().zip(&facts_current).enumerate() {
        let citable = receipt_retirement(
            r.fixture_hash.as_deref(),
            r.code.as_deref(),
            &Current {
                digest: None,
                pin: pin.as_deref(),
                code: code.as_deref(),
            },
        )
        .is_none();
        let file = &files[r.index];
        let beside = crate::cite_stream::read_beside(file, index as u32, citable, &mut own)?;
        r.disagreement = beside.disagreement;
        r.failing_seeds = beside.failing_seeds;
        r.runs_beside = beside.runs_beside;
        r.part_runs = beside.part_runs;
        r.own = beside.own;
    }

    let x = expectation(&args.expect)?;
    let roles = x.roles.label();
    let facts: Vec<ReceiptFacts<'_>> = receipts
        .iter()
        .zip(&facts_current)
        .map(|(r, (pin, code))| ReceiptFacts {
            file: &r.shown,
            patch_id: r.patch_id.as_deref().unwrap_or(""),
            property_id: r.property_id.as_deref().unwrap_or(""),
            status: r.closing.status,
            fixture_hash: r.fixture_hash.as_deref(),
            code: r.code.as_deref(),
            code_base: r.code_base.as_deref(),
            current: Current {
                digest: None,
                pin: pin.as_deref(),
                code: code.as_deref(),
            },
            disagreement: r.disagreement.as_deref(),
            failing_seeds: &r.failing_seeds,
            rng: r.rng.as_deref(),
            run_id: r.run_id.as_deref(),
            part_runs: &r.part_runs,
        })
        .collect();
    let roles_authenticated = roles == "authenticated";
    // The review the citation would run, prepared before the batch is read (its first pass
    // tallies the seeds it needs), when the receipts leave one to run.
    let mut review = seedledger_gate::review_origin(
        &facts,
        &x.expected,
        roles_authenticated,
        args.waive_same_seed_review,
    )
    .map(|origin| seedledger_gate::CiteReview::new(x.expected.clone(), origin));
    let mut known = match &review {
        Some(_) => Some(own.known(crate::cite_stream::PRINT_BUDGET)?),
        None => None,
    };
    if let Some(review) = &mut review {
        // The rows the patch's own runs wrote on the seeds a pair may be on: a runner must be
        // consistent over them too. A current receipt's rows are of its property, patch and
        // code (it agrees with them).
        let of_review: Vec<bool> = facts
            .iter()
            .map(|f| {
                f.property_id == x.expected.property_id
                    && f.patch_id == review.origin().patch_id
                    && f.code == Some(review.origin().code.as_str())
            })
            .collect();
        for record in own.records()? {
            let record =
                record.context("cannot read back the fingerprints of the receipts' rows")?;
            if of_review.get(record.receipt as usize) == Some(&true) {
                review.push_own(record.seed, own.scheme(record.scheme), record.verdict);
            }
        }
    }
    let mut offered = OfferedRuns::new(facts.first().map(|f| f.patch_id));
    let decided = crate::cite_stream::decide(
        &args.expect.witnesses,
        &x.expected,
        &x.roles,
        &mut offered,
        review.as_mut().zip(known.as_mut()),
    )?;
    x.notes(decided.lines, &decided.decision, decided.culprit);
    let decision = decided.decision;
    let starts = decided.starts;
    let mut pinned = decided.pinned;
    let expected = &x.expected;

    for f in &facts {
        let retired = receipt_retirement(f.fixture_hash, f.code, &f.current);
        err_line(&format!(
            "note: receipt `{}` (patch `{}`, property `{}`, code {}): {}{}{}",
            f.file,
            f.patch_id,
            f.property_id,
            f.code.unwrap_or("<none>"),
            f.status,
            match retired {
                Some(why) => format!(", {why}: not counted as evidence"),
                None => String::new(),
            },
            match f.disagreement {
                Some(why) => format!(", rows disagree: {why}"),
                None => String::new(),
            }
        ));
    }
    // The gate's rules over what was read: two runs' rows under one id refuse; the runs with
    // rows but no receipt are named.
    let sources: Vec<&(PathBuf, Vec<String>)> =
        receipts.iter().filter_map(|r| r.own.as_ref()).collect();
    if let Some(e) = crate::cite_stream::edited(&mut own, &sources)? {
        bail!("{e}");
    }
    let runs_without_receipt = offered.without_receipt(
        facts.iter(),
        receipts
            .iter()
            .flat_map(|r| r.runs_beside.iter().map(String::as_str)),
    );
    let req = CiteFacts {
        decision: &decision,
        expected,
        writer: Runner::from(args.runner),
        receipts: &facts,
        expires_at: args.expires_at.as_deref(),
        now,
        waive_same_seed_review: args.waive_same_seed_review,
        runs_without_receipt: &runs_without_receipt,
        spec_reviewed: x.oracle == seedledger_format::OracleSource::HumanReviewed,
        roles_authenticated,
        cited: &cited,
    };
    // The review printed is the one the citation writer ran (the patch's rows at its code).
    let cited = match (seedledger_gate::cite_checks(&req), review, known.as_mut()) {
        (Ok(origin), Some(review), Some(known)) => {
            known.resolve(&mut own)?;
            let reviewed = crate::cite_stream::review(
                &args.expect.witnesses,
                &starts,
                &mut pinned,
                &x.roles,
                review,
                known,
            )?;
            seedledger_gate::cite_written(&req, &origin, reviewed)
        }
        (Ok(_), ..) => bail!("the same-seed review was not prepared; this is a bug"),
        (Err(e), ..) => Err(e),
    };
    let (outcome, review) = match cited {
        Ok((mut citation, review)) => {
            if let Some((key, key_id)) = &signer {
                seedledger_gate::sign_citation(&mut citation, key, key_id);
            }
            (
                write_citation(&store, &citation, trust.keys())?,
                Some(review),
            )
        }
        Err(e) if e.is_input_error() => bail!("{e}"),
        Err(CiteError::Review { reason, detail }) => (
            Err(CiteError::Review {
                reason,
                detail: detail.clone(),
            }),
            Some(Review {
                outcome: Err(reason),
                detail,
            }),
        ),
        Err(e) => (Err(e), None),
    };
    print_cite(&decision, review.as_ref(), &outcome, roles, args.format);
    Ok(match outcome {
        Ok(_) => ExitStatus::Success,
        Err(_) => ExitStatus::No,
    })
}

/// The receipts given, and every other `*.receipt.json` in their directories (an evidence
/// directory holds one patch's receipts: a citation never trusts the caller to list them all;
/// leaving out an open one does not make it go away). The ones found are named on stderr.
fn with_neighbours(given: &[PathBuf]) -> Vec<PathBuf> {
    let mut all: Vec<PathBuf> = given.to_vec();
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => a == b,
    };
    for file in given {
        let dir = match file.parent() {
            Some(d) if !d.as_os_str().is_empty() => d.to_path_buf(),
            _ => PathBuf::from("."),
        };
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        let mut found: Vec<PathBuf> = entries
            .filter_map(Result::ok)
            .map(|e| e.path())
            .filter(|p| p.to_string_lossy().ends_with(".receipt.json"))
            .collect();
        found.sort();
        for path in found {
            if !all.iter().any(|seen| same(seen, &path)) {
                err_line(&format!(
                    "note: receipt `{}` lies beside the given receipts: included",
                    path.display()
                ));
                all.push(path);
            }
        }
    }
    all
}

/// Reads and closes every receipt given. `Err` when one cannot be read or is not JSON (all
/// are named) or has no patch_id. (Each is cross-checked with its run's rows after:
/// `cite_stream::read_beside`.)
fn read_receipts(files: &[PathBuf]) -> anyhow::Result<Vec<ReadReceipt>> {
    let mut read = Vec::new();
    let mut errors = Vec::new();
    for (index, file) in files.iter().enumerate() {
        match read_receipt(file) {
            Ok(r) if r.patch_id.is_none() => errors.push(no_patch_id(&r.shown)),
            Ok(mut r) => {
                r.index = index;
                read.push(r);
            }
            Err(message) => errors.push(message),
        }
    }
    if let Some(last) = errors.pop() {
        for message in errors {
            err_line(&format!("error: {message}"));
        }
        bail!(last);
    }
    Ok(read)
}

/// What is current for a receipt: its property's fixture pin now, and the work tree's code
/// identity against the receipt's own base.
fn current_of(currents: &mut Currents, r: &ReadReceipt) -> (Option<String>, Option<String>) {
    let pin = r
        .property_id
        .as_deref()
        .and_then(|p| currents.spec(p))
        .map(|(_, pin)| pin);
    (pin, currents.code(r.code_base.as_deref()))
}

/// The retirement of a receipt against the work tree (see `seedledger_gate::receipt_retirement`).
fn retirement(currents: &mut Currents, r: &ReadReceipt) -> Option<Retirement> {
    let (pin, code) = current_of(currents, r);
    receipt_retirement(
        r.fixture_hash.as_deref(),
        r.code.as_deref(),
        &Current {
            digest: None,
            pin: pin.as_deref(),
            code: code.as_deref(),
        },
    )
}

/// Writes the citation into the store under a new name, atomically, never over an existing
/// file (the rename itself refuses to replace one). The store's directory is locked meanwhile
/// (an advisory lock on the directory itself), and its evidence read again under the lock: of
/// two `gate cite`s of one piece of evidence at once, the second is refused. Returns the path
/// written, or the refusal.
fn write_citation(
    store: &Path,
    citation: &Citation,
    keys: Option<&seedledger_format::TrustedKeys>,
) -> anyhow::Result<Result<String, CiteError>> {
    let text = citation.to_json_pretty();
    std::fs::create_dir_all(store)
        .with_context(|| format!("cannot create the freeze store `{}`", store.display()))?;
    let dir = std::fs::File::open(store)
        .with_context(|| format!("cannot open the freeze store `{}`", store.display()))?;
    dir.lock()
        .with_context(|| format!("cannot lock the freeze store `{}`", store.display()))?;
    let stored = crate::freezes::read_store(store, keys).map_err(|e| anyhow!(e))?;
    let shown: Vec<String> = stored
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    let cited = crate::freezes::cited_evidence(&stored, &shown);
    if let Some((file, id)) =
        seedledger_gate::already_cited(&cited, &citation.fail_id, &citation.pass_id)
    {
        return Ok(Err(CiteError::AlreadyCited {
            id,
            file: file.to_string(),
        }));
    }
    let out = store.join(citation.file_name(&text));
    match write_atomic_new(&out, text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => bail!(
            "`{}` already exists; a citation is never refreshed or extended",
            out.display()
        ),
        res => res.with_context(|| format!("cannot write citation `{}`", out.display()))?,
    }
    Ok(Ok(out.display().to_string()))
}

fn print_cite(
    d: &FreezeDecision,
    review: Option<&Review>,
    outcome: &Result<String, CiteError>,
    roles: &str,
    format: Format,
) {
    match format {
        Format::Human => {
            out_line(&d.reason);
            if let (Some(fail_id), Some(pass_id)) = (&d.fail_id, &d.pass_id) {
                out_line(&format!("fail_id: {fail_id}"));
                out_line(&format!("pass_id: {pass_id}"));
            }
            match review {
                Some(review) => out_line(&review.summary()),
                None => {
                    out_line("same-seed review: not reached (the citation was refused before it)")
                }
            }
            match outcome {
                Ok(path) => out_line(&format!("citation written: {path}")),
                Err(e) => out_line(&format!("citation refused: {e}")),
            }
        }
        Format::Json => gate_json::print(&CiteLine {
            written: outcome.is_ok(),
            reason: &d.reason,
            refusal: outcome.as_ref().err().map(ToString::to_string),
            review_reason: match outcome {
                Err(CiteError::Review { reason, .. }) => Some(*reason),
                _ => None,
            },
            citation: outcome.as_ref().ok().map(String::as_str),
            fail_id: d.fail_id.as_deref(),
            pass_id: d.pass_id.as_deref(),
            same_seed_review: review.map(ReviewJson::of),
            roles,
        }),
    }
}

fn print_decision(d: &FreezeDecision, review: &Review, roles: &str, format: Format) {
    match format {
        Format::Human => {
            out_line(&d.reason);
            if let (Some(fail_id), Some(pass_id)) = (&d.fail_id, &d.pass_id) {
                out_line(&format!("fail_id: {fail_id}"));
                out_line(&format!("pass_id: {pass_id}"));
            }
            out_line(&review.summary());
        }
        Format::Json => gate_json::print(&DecisionLine {
            admit: d.admit,
            reason: &d.reason,
            fail_id: d.fail_id.as_deref(),
            pass_id: d.pass_id.as_deref(),
            same_seed_review: ReviewJson::of(review),
            roles,
        }),
    }
}

fn freezes(args: &FreezesArgs) -> ExitStatus {
    let root = args.root.clone().unwrap_or_else(crate::prop::discover_root);
    let dir = crate::freezes::store_dir(&root, args.store.as_deref());
    if let Some(base) = &args.base {
        return crate::store_diff::run(&root, &dir, base);
    }
    let read = crate::trust::Roles::load(&root).and_then(|trust| {
        let store = crate::freezes::read_store(&dir, trust.keys()).map_err(|e| anyhow!(e))?;
        Ok((trust, store))
    });
    let (trust, store) = match read {
        Ok(read) => read,
        Err(e) => {
            err_line(&format!("error: {e:#}"));
            return ExitStatus::Error;
        }
    };
    if store.is_empty() && args.format == Format::Human {
        err_line(&format!("note: no citations in `{}`", dir.display()));
    }
    if trust.keys().is_none() && !store.is_empty() {
        err_line(&format!(
            "note: no `{}` declares who may cite: every citation here is an {} (anyone who can write the store can freeze)",
            seedledger_format::TRUST_FILE,
            seedledger_gate::UNAUTHENTICATED
        ));
    }
    let now = match args.at.as_deref().map(parse_rfc3339) {
        None => crate::freezes::now_checked(&store),
        Some(Some(at)) if at >= 0 => Ok(at),
        Some(_) => Err(format!(
            "`--at {}` is not an RFC 3339 time since 1970 such as 2030-01-01T00:00:00Z",
            args.at.as_deref().unwrap_or("")
        )),
    };
    let now = match now {
        Ok(now) => now,
        Err(e) => {
            err_line(&format!("error: {e}"));
            return ExitStatus::Error;
        }
    };
    let mut currents = Currents::new(&root);
    let mut status = ExitStatus::Success;
    for stored in &store {
        let shown = stored.path.display().to_string();
        match &stored.citation {
            Ok((c, auth)) => print_freeze(&shown, c, auth, currents.judge(c, now), args.format),
            Err(e) => {
                status = ExitStatus::Error;
                err_line(&format!("error: citation `{shown}`: {e}"));
                match args.format {
                    Format::Human => out_line(&format!("{shown}: invalid  ({e})")),
                    Format::Json => gate_json::print(&FreezeLine {
                        citation: &shown,
                        state: "invalid",
                        property_id: None,
                        signature: None,
                        expires_at: None,
                        patch_id: None,
                        seed: None,
                        same_seed_review: None,
                        authenticity: None,
                        key_id: None,
                        error: Some(e),
                    }),
                }
            }
        }
    }
    status
}

/// One citation that may be honoured, as `gate freezes` lists it.
fn print_freeze(
    shown: &str,
    c: &Citation,
    auth: &seedledger_gate::Authenticity,
    state: seedledger_gate::CitationState,
    format: Format,
) {
    match format {
        Format::Human => out_line(&format!(
            "{shown}: {state}  property {} [{}] expires {}, patch {}, same-seed review {}, {}",
            c.property_id,
            c.signature,
            c.expires_at,
            c.patch_id,
            c.same_seed_review.as_str(),
            auth.label()
        )),
        Format::Json => gate_json::print(&FreezeLine {
            citation: shown,
            state: state.as_str(),
            property_id: Some(&c.property_id),
            signature: Some(&c.signature),
            expires_at: Some(&c.expires_at),
            patch_id: Some(&c.patch_id),
            seed: Some(c.seed),
            same_seed_review: Some(c.same_seed_review.as_str()),
            authenticity: Some(match auth {
                seedledger_gate::Authenticity::Signed { .. } => "signed",
                seedledger_gate::Authenticity::Unauthenticated => "unauthenticated",
            }),
            key_id: match auth {
                seedledger_gate::Authenticity::Signed { key_id } => Some(key_id),
                seedledger_gate::Authenticity::Unauthenticated => None,
            },
            error: None,
        }),
    }
}

fn print_hash(file: &Path, what: &str, hash: fn(&[u8]) -> String) -> ExitStatus {
    match read(file, what) {
        Ok(bytes) => {
            out_line(&hash(&bytes));
            ExitStatus::Success
        }
        Err(e) => {
            err_line(&format!("error: {e:#}"));
            ExitStatus::Error
        }
    }
}

fn read(path: &Path, what: &str) -> anyhow::Result<Vec<u8>> {
    read_bounded(path, what, MAX_FIXTURE_BYTES)
}

/// The largest receipt the gate reads (a 10^7-seed plan's receipt is about 190 MB).
pub const MAX_RECEIPT_BYTES: u64 = 1 << 30;
/// The largest witness file the gate reads whole (a file the streams cannot vouch for, read
/// again to name its error).
pub const MAX_WITNESS_BYTES: u64 = 4 << 30;
/// The largest witness file the gate reads as a stream (`gate decide`, `gate cite`,
/// `gate close --verify`, `gate merge`'s copy): their memory does not grow with the file, so the bound is only a
/// guard against a runaway file (a 10^7-seed plan writes 4–6 GB of rows).
pub const MAX_STREAMED_WITNESS_BYTES: u64 = 1 << 40;
/// The largest spec file the gate reads.
pub const MAX_SPEC_BYTES: u64 = 1 << 20;
/// The largest fixture the gate pins.
pub const MAX_FIXTURE_BYTES: u64 = 1 << 30;

/// Reads an evidence or input file: never through a symbolic link, only a regular file
/// (not a device or a pipe: `gate close /dev/urandom` is refused, not read forever), at most
/// `max` bytes. Errors name the file and say which rule refused it.
pub fn read_bounded(path: &Path, what: &str, max: u64) -> anyhow::Result<Vec<u8>> {
    use std::io::Read as _;
    let shown = path.display();
    let (mut file, len) = open_bounded(path, what, max)?;
    let mut bytes = Vec::with_capacity(usize::try_from(len).unwrap_or(0));
    file.read_to_end(&mut bytes)
        .with_context(|| format!("cannot read {what} `{shown}`"))?;
    if bytes.len() as u64 > max {
        bail!("cannot read {what} `{shown}`: it grew past the {max} bytes a {what} may have");
    }
    Ok(bytes)
}

/// Opens an evidence or input file for reading as a stream, under the rules of
/// [`read_bounded`]: no symbolic link, a regular file, at most `max` bytes now. The reader
/// stops one byte past `max`; a caller that reads that many says the file grew past its
/// bound (as [`read_bounded`] does). Returns the reader and the file's length when opened.
pub fn open_bounded(
    path: &Path,
    what: &str,
    max: u64,
) -> anyhow::Result<(std::io::Take<std::fs::File>, u64)> {
    use std::io::Read as _;
    let shown = path.display();
    let meta =
        std::fs::symlink_metadata(path).with_context(|| format!("cannot read {what} `{shown}`"))?;
    if meta.file_type().is_symlink() {
        bail!(
            "cannot read {what} `{shown}`: it is a symbolic link; evidence is never read through links"
        );
    }
    if !meta.is_file() {
        bail!("cannot read {what} `{shown}`: not a regular file");
    }
    if meta.len() > max {
        bail!(
            "cannot read {what} `{shown}`: {} bytes is more than the {max} bytes a {what} may have",
            meta.len()
        );
    }
    let file =
        std::fs::File::open(path).with_context(|| format!("cannot read {what} `{shown}`"))?;
    Ok((file.take(max + 1), meta.len()))
}

/// The 1-based line of `key:` in a spec's front matter (1 when not found).
fn key_line(text: &str, key: &str) -> usize {
    text.lines()
        .position(|l| l.split_once(':').is_some_and(|(k, _)| k.trim() == key))
        .map_or(1, |i| i + 1)
}

/// Prints a line on stdout; a closed pipe is not a reason to panic.
fn out_line(line: &str) {
    outln!("{line}");
}

/// Prints a line on stderr; a closed pipe is not a reason to panic.
fn err_line(line: &str) {
    errln!("{line}");
}
