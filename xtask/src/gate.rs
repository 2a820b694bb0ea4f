//! `cargo xtask gate ...`: close receipts, count them per patch, decide freezes, write
//! citations, print pins and digests. Thin: reads files, computes the expected digest and pin
//! from the checked-in spec and fixture files, reads the clock for a citation's `written_at`
//! (the gate crate reads none), calls `seedledger-gate`, prints, and maps outcomes to exit
//! codes (0 yes, 1 no, 2 error).

use crate::prop::Role;
use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use seedledger_format::{
    Citation, ExitStatus, Runner, SpecFile, fixture_hash_from_pin, fixture_pin, property_digest,
    to_json_readable, write_atomic_new,
};
use seedledger_gate::{
    CiteError, CiteRequest, CloseStatus, Closing, Expected, FreezeDecision, close_ledger_bytes,
    decide_freeze, patch_counts, witness_lines_from_bytes,
};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::time::{SystemTime, UNIX_EPOCH};

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
    /// Output. Human: the reason, verbatim, on the first line; on admit `fail_id: <id>` and
    /// `pass_id: <id>` follow. Notes on stderr say what was expected and which file and line
    /// decided a refusal. JSON (`--format json`): the last stdout line is
    /// `{"admit": <bool>, "reason": "<reason>", "fail_id": <id or null>, "pass_id": <id or null>}`.
    ///
    /// Exit status: 0 admitted; 1 refused; 2 unreadable input (a missing witness, spec or
    /// fixture file, a spec whose front matter is bad, a spec for another property).
    #[command(verbatim_doc_comment)]
    Decide(DecideArgs),

    /// Decide as `gate decide` does, check the patch's receipts, and on admit write a citation.
    ///
    /// A citation (the freeze file) is written only when every check passes, in this order
    /// (SPEC: Citation):
    ///   1. the writer is local (`--runner local`, the default; a remote runner has no path
    ///      to write one);
    ///   2. an expiry from policy is given (`--expires-at`);
    ///   3. the witness rows admit, exactly as `gate decide` says (same flags, same reason);
    ///   4. the patch has no open receipt (incomplete_fields, empty_plan,
    ///      early_stop_incomplete, seed_gap) among `--receipts`;
    ///   5. one of `--receipts` is freeze_eligible for `--property`, made against the current
    ///      fixture (a closed receipt whose fixture_hash is not `sha256:<current pin>` is
    ///      retired and left out).
    ///
    /// `--receipts` are all the receipts of ONE patch; the patch id is read from them. The
    /// citation names the patch, the property, the digest, the pin, the bound, fail_id and
    /// pass_id, expires_at (given as RFC 3339, e.g. 2030-01-01T00:00:00Z or with an offset;
    /// written in UTC to the second) and written_at (now, UTC). It is written atomically to
    /// `--out`, which must not exist: a citation is never refreshed or extended; a new one
    /// needs new evidence and a new file.
    ///
    /// Output. Human: the decision reason, verbatim, on the first line; on admit `fail_id:`
    /// and `pass_id:` lines; then `citation written: <out>` or `citation refused: <why>`.
    /// Notes on stderr name the expected values and every receipt's status. JSON
    /// (`--format json`): the last stdout line is
    /// `{"written": <bool>, "reason": "<decision reason>", "refusal": <why or null>,
    ///   "citation": <out or null>, "fail_id": <id or null>, "pass_id": <id or null>}`.
    ///
    /// Exit status: 0 the citation was written; 1 refused (a remote writer, no expiry, the
    /// decision refused, an open receipt, no eligible receipt); 2 error (`--out` exists, an
    /// expiry that is not RFC 3339 or not in the future, receipts of more than one patch or
    /// without a patch_id, an unreadable receipt, witness, spec or fixture file, a failed
    /// write).
    ///
    /// Example:
    ///   cargo xtask gate cite --property order_total_nonneg \
    ///     --witnesses target/seedledger/agent-1842/order_total_nonneg.witness.jsonl \
    ///                 remote/order_total_nonneg.witness.jsonl \
    ///     --receipts target/seedledger/agent-1842/*.receipt.json \
    ///     --expires-at 2030-01-01T00:00:00Z --out freezes/order_total_nonneg.json
    #[command(verbatim_doc_comment)]
    Cite(CiteArgs),

    /// Count receipts per patch: open receipts, closed failures, budget passes.
    ///
    /// Every receipt is closed (as `gate close` does) and counted for the patch named by its
    /// patch_id: open = incomplete_fields, empty_plan, early_stop_incomplete or seed_gap (the
    /// declared budget did not provably finish); closed failure = seed_mismatch ..
    /// freeze_eligible; budget pass = budget_pass_no_freeze. The freeze path of a patch is
    /// enabled only while it has no open receipt (SPEC: Per-patch counts and retirement).
    ///
    /// Output, one line per patch, sorted by patch id. Human:
    /// `<patch>: open <n>, closed failures <n>, budget passes <n>; freeze path enabled|disabled`;
    /// stderr names each open receipt and why it is open. JSON (`--format json`): one object
    /// per patch per line, `{"patch_id": "<id>", "open_receipts": <n>, "closed_failures": <n>,
    /// "budget_passes": <n>, "freeze_enabled": <bool>}`.
    ///
    /// Exit status: 0 no patch has an open receipt; 1 some patch has one; 2 a receipt cannot
    /// be read, is not JSON or has no patch_id (stderr names it; the others are still counted).
    #[command(verbatim_doc_comment)]
    Counts(CountsArgs),

    /// Print the fixture pin of FILE: sha256(b"fixture-v1\n" ++ bytes), lowercase hex.
    ///
    /// A receipt's fixture_hash is `sha256:` followed by this pin. Exit 2 when FILE cannot be
    /// read.
    Pin {
        /// The fixture file.
        file: PathBuf,
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
    /// Where to write the citation (JSON). Must not exist: a citation is never refreshed.
    #[arg(long, value_name = "FILE")]
    out: PathBuf,
    /// Who is asking to write: only a local runner may write a citation.
    #[arg(long, value_enum, default_value_t = Role::Local)]
    runner: Role,
}

#[derive(Debug, Args)]
pub struct CountsArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Receipt files (JSON) of one or more patches.
    #[arg(required = true, value_name = "RECEIPT")]
    files: Vec<PathBuf>,
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
    /// The workspace root that the defaults are relative to [default: the current directory].
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
        GateCommand::Pin { file } => print_hash(&file, "fixture", fixture_pin),
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
    closing: Closing,
    /// `patch_id`, when it is a non-empty string.
    patch_id: Option<String>,
    /// `property_id`, when it is a non-empty string.
    property_id: Option<String>,
    /// `fixture_hash`, when it is a string.
    fixture_hash: Option<String>,
}

/// Reads and closes one receipt. `Err` (a message naming the file, and the line and column
/// when it is not JSON) only when the file cannot be read or is not JSON at all.
fn read_receipt(file: &Path) -> Result<ReadReceipt, String> {
    let shown = file.display().to_string();
    let bytes = std::fs::read(file).map_err(|e| format!("cannot read receipt `{shown}`: {e}"))?;
    let closing = close_ledger_bytes(&bytes).map_err(|e| format!("receipt `{shown}`: {e}"))?;
    // The bytes are JSON (close_ledger_bytes said so); a value that is not an object has no
    // identity fields.
    let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
    let text = |key: &str| {
        value
            .get(key)
            .and_then(Value::as_str)
            .filter(|s| !s.is_empty())
            .map(str::to_string)
    };
    Ok(ReadReceipt {
        patch_id: text("patch_id"),
        property_id: text("property_id"),
        fixture_hash: text("fixture_hash"),
        shown,
        closing,
    })
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
                match args.format {
                    Format::Human if eligible => out_line(&format!("{shown}: {}", closing.status)),
                    Format::Human => {
                        out_line(&format!("{shown}: {} ({})", closing.status, closing.detail))
                    }
                    Format::Json => out_line(
                        &json!({
                            "file": shown,
                            "status": closing.status.as_str(),
                            "detail": closing.detail,
                        })
                        .to_string(),
                    ),
                }
            }
            Err(message) => {
                worst = ExitStatus::Error;
                err_line(&format!("error: {message}"));
                if args.format == Format::Json {
                    let shown = file.display().to_string();
                    out_line(&json!({"file": shown, "status": null, "error": message}).to_string());
                }
            }
        }
    }
    worst
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
    for (patch_id, r) in &read {
        if r.closing.status.is_open() {
            err_line(&format!(
                "note: patch `{patch_id}`: receipt `{}` is open: {} ({})",
                r.shown, r.closing.status, r.closing.detail
            ));
        }
    }
    let counts = patch_counts(read.iter().map(|(p, r)| (p.as_str(), r.closing.status)));
    let mut any_open = false;
    for c in &counts {
        any_open |= !c.freeze_enabled();
        match args.format {
            Format::Human => out_line(&format!(
                "{}: open {}, closed failures {}, budget passes {}; freeze path {}",
                c.patch_id,
                c.open_receipts,
                c.closed_failures,
                c.budget_passes,
                if c.freeze_enabled() {
                    "enabled"
                } else {
                    "disabled"
                }
            )),
            Format::Json => out_line(
                &json!({
                    "patch_id": c.patch_id,
                    "open_receipts": c.open_receipts,
                    "closed_failures": c.closed_failures,
                    "budget_passes": c.budget_passes,
                    "freeze_enabled": c.freeze_enabled(),
                })
                .to_string(),
            ),
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

/// The outcome of deciding a batch of witness rows, and what it was decided against.
struct Evaluation {
    expected: Expected,
    decision: FreezeDecision,
}

fn decide(args: &DecideArgs) -> anyhow::Result<ExitStatus> {
    let Evaluation { decision, .. } = evaluate(&args.expect)?;
    print_decision(&decision, args.format);
    Ok(if decision.admit {
        ExitStatus::Success
    } else {
        ExitStatus::No
    })
}

/// Computes the expected digest, pin and bound from the checked-in spec and fixture files,
/// reads every witness file and decides (SPEC: Gate decision 2). Notes on stderr say what
/// was expected and which file and line decided a refusal. `Err` is unreadable input.
fn evaluate(args: &ExpectArgs) -> anyhow::Result<Evaluation> {
    // Without `--root`, defaults are relative paths (shown as `props/ID.md`, not `./props/...`).
    let root = args.root.clone().unwrap_or_default();
    let property = args.property.as_str();
    let spec_path = match &args.spec {
        Some(path) => path.clone(),
        None => {
            if property.is_empty() || property.contains(['/', '\\']) || property.starts_with('.') {
                bail!(
                    "`--property {property}` is not a property id (no path separators, not empty)"
                );
            }
            root.join("props").join(format!("{property}.md"))
        }
    };
    let spec_bytes = read(&spec_path, "spec")?;
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
    let fixture_path = args
        .fixture
        .clone()
        .unwrap_or_else(|| root.join(&spec.fixture));
    let fixture_bytes = read(&fixture_path, "fixture").with_context(|| {
        format!(
            "the fixture named by spec `{}` (or `--fixture`)",
            spec_path.display()
        )
    })?;
    let expected = Expected {
        property_id: property.to_string(),
        digest: property_digest(&spec_bytes),
        pin: fixture_pin(&fixture_bytes),
        bound: args.bound.clone().unwrap_or_else(|| spec.bound.clone()),
    };

    // Every witness file is read before anything is decided; all unreadable ones are named.
    let mut lines = Vec::new();
    let mut origin = Vec::new();
    let mut unreadable = Vec::new();
    for (i, file) in args.witnesses.iter().enumerate() {
        match std::fs::read(file) {
            Ok(bytes) => {
                let these = witness_lines_from_bytes(&bytes);
                origin.extend(std::iter::repeat_n(i, these.len()));
                lines.extend(these);
            }
            Err(e) => unreadable.push(format!(
                "cannot read witness file `{}`: {e}",
                file.display()
            )),
        }
    }
    if let Some(last) = unreadable.pop() {
        for message in unreadable {
            err_line(&format!("error: {message}"));
        }
        bail!(last);
    }

    let decision = decide_freeze(&lines, &expected);
    err_line(&format!(
        "note: expected property `{}`, digest {} (`{}`), pin {} (`{}`), bound `{}`; {} rows read",
        expected.property_id,
        expected.digest,
        spec_path.display(),
        expected.pin,
        fixture_path.display(),
        expected.bound,
        lines.len()
    ));
    let culprit_file = decision
        .rejected_row
        .and_then(|i| origin.get(i))
        .and_then(|&f| args.witnesses.get(f));
    match culprit_file {
        Some(file) => err_line(&format!("note: `{}`: {}", file.display(), decision.detail)),
        None => err_line(&format!("note: {}", decision.detail)),
    }
    Ok(Evaluation { expected, decision })
}

fn cite(args: &CiteArgs) -> anyhow::Result<ExitStatus> {
    // Bad arguments first: nothing is read or decided for a citation that could not be written.
    refuse_existing(&args.out)?;
    let now = now_secs();
    let expires_at = match args.expires_at.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(text) => Some(expiry(text, now)?),
    };
    let (patch_id, receipts) = read_patch_receipts(&args.receipts)?;
    let Evaluation { expected, decision } = evaluate(&args.expect)?;

    // Receipt notes; closed receipts of the cited property made against another fixture are
    // retired (SPEC: a receipt retires when the fixture hash changes) and left out. Open
    // receipts always count: while one is open, freeze creation stays disabled.
    let current = fixture_hash_from_pin(&expected.pin);
    let mut statuses: Vec<(&str, CloseStatus)> = Vec::with_capacity(receipts.len());
    for r in &receipts {
        let property = r.property_id.as_deref().unwrap_or("");
        let status = r.closing.status;
        let retired = property == expected.property_id
            && !status.is_open()
            && r.fixture_hash.as_deref() != Some(current.as_str());
        err_line(&format!(
            "note: receipt `{}` (patch `{patch_id}`, property `{}`): {} ({})",
            r.shown,
            r.property_id.as_deref().unwrap_or("<none>"),
            status,
            r.closing.detail
        ));
        if retired {
            err_line(&format!(
                "note: receipt `{}` is retired: its fixture_hash `{}` is not the current `{current}`; it cannot back a citation",
                r.shown,
                r.fixture_hash.as_deref().unwrap_or("<none>")
            ));
        } else {
            statuses.push((property, status));
        }
    }

    let written_at = rfc3339(now);
    let req = CiteRequest {
        decision: &decision,
        expected: &expected,
        patch_id: &patch_id,
        writer: Runner::from(args.runner),
        receipts: &statuses,
        expires_at: expires_at.as_deref(),
        written_at: &written_at,
    };
    let outcome = match seedledger_gate::cite(&req) {
        Ok(citation) => {
            write_citation(&args.out, &citation)?;
            Ok(args.out.display().to_string())
        }
        Err(e) => Err(e),
    };
    print_cite(&decision, &outcome, args.format);
    Ok(match outcome {
        Ok(_) => ExitStatus::Success,
        Err(_) => ExitStatus::No,
    })
}

/// A citation is never refreshed or extended: `--out` must not exist (not even as a dangling
/// link or a directory).
fn refuse_existing(out: &Path) -> anyhow::Result<()> {
    match std::fs::symlink_metadata(out) {
        Ok(_) => Err(already_exists(out)),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(()),
        Err(e) => Err(anyhow!("cannot check `--out {}`: {e}", out.display())),
    }
}

fn already_exists(out: &Path) -> anyhow::Error {
    anyhow!(
        "`--out {}` already exists; a citation is never refreshed or extended: a new one needs new evidence and a new file",
        out.display()
    )
}

/// Validates `--expires-at` against `now` and returns it in UTC, `YYYY-MM-DDTHH:MM:SSZ`.
fn expiry(text: &str, now: u64) -> anyhow::Result<String> {
    let Some(secs) = parse_rfc3339(text) else {
        bail!(
            "`--expires-at {text}` is not an RFC 3339 time; give a UTC time such as 2030-01-01T00:00:00Z"
        );
    };
    match u64::try_from(secs) {
        Ok(secs) if secs > now => Ok(rfc3339(secs)),
        _ => bail!(
            "`--expires-at {text}` is not in the future (now is {}); an expired citation is not honoured",
            rfc3339(now)
        ),
    }
}

/// Reads and closes every receipt of the patch being cited. `Err` when one cannot be read or
/// is not JSON (all are named), has no patch_id, or when they name more than one patch.
fn read_patch_receipts(files: &[PathBuf]) -> anyhow::Result<(String, Vec<ReadReceipt>)> {
    let mut read = Vec::new();
    let mut errors = Vec::new();
    for file in files {
        match read_receipt(file) {
            Ok(r) if r.patch_id.is_none() => errors.push(no_patch_id(&r.shown)),
            Ok(r) => read.push(r),
            Err(message) => errors.push(message),
        }
    }
    if let Some(last) = errors.pop() {
        for message in errors {
            err_line(&format!("error: {message}"));
        }
        bail!(last);
    }
    let mut patches: Vec<(&str, &str)> = Vec::new();
    for r in &read {
        if let Some(p) = r.patch_id.as_deref()
            && !patches.iter().any(|(seen, _)| *seen == p)
        {
            patches.push((p, &r.shown));
        }
    }
    match patches.as_slice() {
        [(patch_id, _)] => {
            let patch_id = patch_id.to_string();
            Ok((patch_id, read))
        }
        [] => bail!("no receipts given; a citation needs the receipts of its patch"),
        many => {
            let named: Vec<String> = many
                .iter()
                .map(|(p, file)| format!("`{p}` (first in `{file}`)"))
                .collect();
            bail!(
                "the receipts belong to {} patches: {}; a citation is for one patch: pass only that patch's receipts",
                many.len(),
                named.join(", ")
            )
        }
    }
}

/// Writes the citation atomically, never over an existing file: the rename itself refuses
/// to replace one, so two writers racing for the same `out` cannot both succeed.
fn write_citation(out: &Path, citation: &Citation) -> anyhow::Result<()> {
    let value = serde_json::to_value(citation).context("cannot encode the citation")?;
    let mut text = to_json_readable(&value);
    text.push('\n');
    refuse_existing(out)?;
    match write_atomic_new(out, text.as_bytes()) {
        Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => Err(already_exists(out)),
        res => res.with_context(|| format!("cannot write citation `{}`", out.display())),
    }
}

fn print_cite(d: &FreezeDecision, outcome: &Result<String, CiteError>, format: Format) {
    match format {
        Format::Human => {
            out_line(&d.reason);
            if let (Some(fail_id), Some(pass_id)) = (&d.fail_id, &d.pass_id) {
                out_line(&format!("fail_id: {fail_id}"));
                out_line(&format!("pass_id: {pass_id}"));
            }
            match outcome {
                Ok(path) => out_line(&format!("citation written: {path}")),
                Err(e) => out_line(&format!("citation refused: {e}")),
            }
        }
        Format::Json => out_line(
            &json!({
                "written": outcome.is_ok(),
                "reason": d.reason,
                "refusal": outcome.as_ref().err().map(ToString::to_string),
                "citation": outcome.as_ref().ok(),
                "fail_id": d.fail_id,
                "pass_id": d.pass_id,
            })
            .to_string(),
        ),
    }
}

fn print_decision(d: &FreezeDecision, format: Format) {
    match format {
        Format::Human => {
            out_line(&d.reason);
            if let (Some(fail_id), Some(pass_id)) = (&d.fail_id, &d.pass_id) {
                out_line(&format!("fail_id: {fail_id}"));
                out_line(&format!("pass_id: {pass_id}"));
            }
        }
        Format::Json => out_line(
            &json!({
                "admit": d.admit,
                "reason": d.reason,
                "fail_id": d.fail_id,
                "pass_id": d.pass_id,
            })
            .to_string(),
        ),
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
    std::fs::read(path).with_context(|| format!("cannot read {what} `{}`", path.display()))
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

/// Seconds since the Unix epoch, now (0 for a clock set before 1970).
fn now_secs() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}

/// `secs` since the Unix epoch as `YYYY-MM-DDTHH:MM:SSZ` (the runner's receipt stamps).
fn rfc3339(secs: u64) -> String {
    seedledger_runner::rfc3339(secs)
}

/// Seconds since the Unix epoch of an RFC 3339 date-time: `YYYY-MM-DDTHH:MM:SS`, an optional
/// fraction (ignored), then `Z` or an offset `+HH:MM` / `-HH:MM`; `T` and `Z` in either case.
/// `None` for anything else, including dates that do not exist (`2030-02-30`).
fn parse_rfc3339(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let num = |from: usize, to: usize| -> Option<i64> {
        let digits = b.get(from..to)?;
        digits.iter().try_fold(0i64, |n, &d| {
            d.is_ascii_digit().then(|| n * 10 + i64::from(d - b'0'))
        })
    };
    let at = |i: usize, allowed: &[u8]| b.get(i).is_some_and(|c| allowed.contains(c));
    if !(at(4, b"-") && at(7, b"-") && at(10, b"Tt") && at(13, b":") && at(16, b":")) {
        return None;
    }
    let (year, month, day) = (num(0, 4)?, num(5, 7)?, num(8, 10)?);
    let (hour, minute, second) = (num(11, 13)?, num(14, 16)?, num(17, 19)?);
    if !(1..=12).contains(&month)
        || !(1..=days_in_month(year, month)).contains(&day)
        || hour > 23
        || minute > 59
        || second > 60
    {
        return None;
    }
    let mut i = 19;
    if at(i, b".") {
        i += 1;
        let start = i;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        if i == start {
            return None;
        }
    }
    let offset = if at(i, b"Zz") && b.len() == i + 1 {
        0
    } else if at(i, b"+-") && at(i + 3, b":") && b.len() == i + 6 {
        let (h, m) = (num(i + 1, i + 3)?, num(i + 4, i + 6)?);
        if h > 23 || m > 59 {
            return None;
        }
        let sign = if at(i, b"-") { -1 } else { 1 };
        sign * (h * 3600 + m * 60)
    } else {
        return None;
    };
    let days = days_from_civil(year, month, day);
    Some(days * 86_400 + hour * 3600 + minute * 60 + second - offset)
}

fn days_in_month(year: i64, month: i64) -> i64 {
    match month {
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        4 | 6 | 9 | 11 => 30,
        _ => 31,
    }
}

/// Days since 1970-01-01 of a proleptic Gregorian date (Howard Hinnant's days-from-civil,
/// the inverse of the runner's civil-from-days).
fn days_from_civil(year: i64, month: i64, day: i64) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y - era * 400;
    let mp = (month + 9) % 12;
    let doy = (153 * mp + 2) / 5 + day - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn rfc3339_times_parse_to_epoch_seconds() {
        for (text, secs) in [
            ("1970-01-01T00:00:00Z", Some(0)),
            ("2000-02-29T00:00:00Z", Some(951_782_400)),
            ("2026-11-29T21:51:03Z", Some(1_795_989_063)),
            ("2026-11-29t21:51:03z", Some(1_795_989_063)),
            ("2026-11-29T21:51:03.123456Z", Some(1_795_989_063)),
            ("2026-11-29T23:51:03+02:00", Some(1_795_989_063)),
            ("2026-11-29T20:21:03-01:30", Some(1_795_989_063)),
            ("1969-12-31T23:59:59Z", Some(-1)),
            ("2030-01-01", None),
            ("2030-01-01T00:00:00", None),
            ("2030-01-01 00:00:00Z", None),
            ("2030-01-01T00:00:00.Z", None),
            ("2030-01-01T00:00:00ZZ", None),
            ("2030-01-01T00:00:00+0200", None),
            ("2030-13-01T00:00:00Z", None),
            ("2030-02-29T00:00:00Z", None),
            ("2030-04-31T00:00:00Z", None),
            ("2030-01-01T24:00:00Z", None),
            ("+030-01-01T00:00:00Z", None),
            ("２０３０-01-01T00:00:00Z", None),
            ("tomorrow", None),
            ("", None),
        ] {
            assert_eq!(parse_rfc3339(text), secs, "{text}");
        }
        for secs in [0u64, 951_782_400, 1_795_989_063, 4_102_444_800] {
            assert_eq!(
                parse_rfc3339(&rfc3339(secs)),
                i64::try_from(secs).ok(),
                "{secs}"
            );
        }
    }

    #[test]
    fn an_expiry_must_be_in_the_future() {
        let now = 1_795_989_063;
        assert_eq!(
            expiry("2026-11-29T23:51:04+02:00", now).ok().as_deref(),
            Some("2026-11-29T21:51:04Z")
        );
        assert!(expiry("2026-11-29T21:51:03Z", now).is_err());
        assert!(expiry("1960-01-01T00:00:00Z", now).is_err());
        assert!(expiry("soon", now).is_err());
    }
}
