//! `cargo xtask gate ...`: close receipts, decide freezes, print pins and digests. Thin: reads
//! files, computes the expected digest and pin from the checked-in spec and fixture files,
//! calls `seedledger-gate`, prints, and maps outcomes to exit codes (0 yes, 1 no, 2 error).

use anyhow::{Context, anyhow, bail};
use clap::{Args, Subcommand, ValueEnum};
use seedledger_format::{ExitStatus, SpecFile, fixture_pin, property_digest};
use seedledger_gate::{
    CloseStatus, Expected, FreezeDecision, close_ledger_bytes, decide_freeze,
    witness_lines_from_bytes,
};
use serde_json::json;
use std::io::Write;
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
    /// Output. Human: the reason, verbatim, on the first line; on admit `fail_id: <id>` and
    /// `pass_id: <id>` follow. Notes on stderr say what was expected and which file and line
    /// decided a refusal. JSON (`--format json`): the last stdout line is
    /// `{"admit": <bool>, "reason": "<reason>", "fail_id": <id or null>, "pass_id": <id or null>}`.
    ///
    /// Exit status: 0 admitted; 1 refused; 2 unreadable input (a missing witness, spec or
    /// fixture file, a spec whose front matter is bad, a spec for another property).
    #[command(verbatim_doc_comment)]
    Decide(DecideArgs),

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
        GateCommand::Decide(args) => match decide(&args) {
            Ok(status) => status,
            Err(e) => {
                err_line(&format!("error: {e:#}"));
                ExitStatus::Error
            }
        },
        GateCommand::Pin { file } => print_hash(&file, "fixture", fixture_pin),
        GateCommand::Digest { file } => print_hash(&file, "spec", property_digest),
    }
}

fn close(args: &CloseArgs) -> ExitStatus {
    let mut worst = ExitStatus::Success;
    for file in &args.files {
        let shown = file.display().to_string();
        let res = std::fs::read(file)
            .map_err(|e| format!("cannot read receipt `{shown}`: {e}"))
            .and_then(|bytes| {
                close_ledger_bytes(&bytes).map_err(|e| format!("receipt `{shown}`: {e}"))
            });
        match res {
            Ok(closing) => {
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
                    out_line(&json!({"file": shown, "status": null, "error": message}).to_string());
                }
            }
        }
    }
    worst
}

fn decide(args: &DecideArgs) -> anyhow::Result<ExitStatus> {
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
    print_decision(&decision, args.format);
    Ok(if decision.admit {
        ExitStatus::Success
    } else {
        ExitStatus::No
    })
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
    let _ = writeln!(std::io::stdout().lock(), "{line}");
}

/// Prints a line on stderr; a closed pipe is not a reason to panic.
fn err_line(line: &str) {
    let _ = writeln!(std::io::stderr().lock(), "{line}");
}
