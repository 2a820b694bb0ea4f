//! `gate flake`: the replays of failing seeds, per runner role, as rates, exact intervals and
//! SPEC's classes, over the witness files (and receipts) of any number of runs. The fold is
//! `seedledger_gate::FlakeReading`; here paths are walked, files opened and read on the
//! cores there are, remote rows authenticated, and the lines printed.

use super::json::{FlakeJsonLine, FlakeRoleJson};
use super::*;
use crate::common::{MAX_STREAMED_WITNESS_BYTES, open_bounded};
use clap::ValueEnum;
use seedledger_format::flake::{Interval, Tally};
use seedledger_format::{ParallelLines, ReceiptScanner, Streamed, Wanted, WitnessLine};
use seedledger_gate::{FLAKE_ROLES, FlakeConfig, FlakeLine, FlakeReading};
use std::collections::BTreeSet;

/// How many malformed lines are named one by one (the rest are counted).
const NAMED_MALFORMED: usize = 20;

/// `gate flake`'s output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum FlakeFormat {
    /// Lines for people and CI logs.
    Human,
    /// JSON Lines for tools (SPEC's object, one per line).
    Json,
    /// One Markdown table (a CI step summary).
    Markdown,
}

#[derive(Debug, Args)]
pub struct FlakeArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = FlakeFormat::Human)]
    format: FlakeFormat,
    /// Only rows (and so replays and fails) carrying this patch_id.
    #[arg(long, value_name = "ID")]
    patch_id: Option<String>,
    /// The workspace root whose props/trusted-runners.jsonl authenticates remote rows
    /// [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
    /// Witness files, or directories searched recursively for `*.witness.jsonl` and
    /// `*.receipt.json` (e.g. the CI artifacts of several pushes). A file's receipts are the
    /// `*.receipt.json` beside it.
    #[arg(required = true, value_name = "PATH")]
    paths: Vec<PathBuf>,
}

/// The files under the paths given, each once, sorted.
#[derive(Debug, Default)]
struct Inputs {
    witnesses: BTreeSet<PathBuf>,
    receipts: BTreeSet<PathBuf>,
}

pub(super) fn flake(args: &FlakeArgs) -> ExitStatus {
    let mut errors = 0usize;
    let mut error = |message: String| {
        err_line(&format!("error: {message}"));
        errors += 1;
    };
    let root = args
        .root
        .clone()
        .unwrap_or_else(crate::common::discover_root);
    let roles = match crate::common::keys::Roles::load(&root) {
        Ok(roles) => roles,
        Err(e) => {
            err_line(&format!("error: {e:#}"));
            return ExitStatus::Error;
        }
    };
    let inputs = inputs(&args.paths, &mut error);
    let mut reading = FlakeReading::new(FlakeConfig {
        patch_id: args.patch_id.clone(),
    });
    for receipt in &inputs.receipts {
        if let Err(e) = read_run(receipt, &mut reading) {
            error(e);
        }
    }
    let mut tally = LineTally::default();
    for file in &inputs.witnesses {
        if let Err(e) = pass(file, &roles, &mut tally, None, |row| reading.first(row)) {
            error(e);
        }
    }
    if reading.needs_second_pass() {
        let wanted = reading.wanted_seeds();
        for file in &inputs.witnesses {
            // Unreadable files were named in the first pass.
            let _ = pass(
                file,
                &roles,
                &mut LineTally::quiet(),
                Some(&wanted),
                |row| reading.second(row),
            );
        }
    }
    print_lines(&reading, args.format);
    notes(&reading, &roles, &tally, &inputs, args.patch_id.as_deref());
    if errors > 0 {
        ExitStatus::Error
    } else {
        ExitStatus::Success
    }
}

/// Walks the paths: a directory for its witness files and receipts, a file as a witness
/// file with the receipts beside it. A path that cannot be read is an error.
fn inputs(paths: &[PathBuf], error: &mut impl FnMut(String)) -> Inputs {
    let mut found = Inputs::default();
    let mut seen = BTreeSet::new();
    for path in paths {
        let canonical = std::fs::canonicalize(path).unwrap_or_else(|_| path.clone());
        if !seen.insert(canonical) {
            continue;
        }
        match std::fs::metadata(path) {
            Ok(meta) if meta.is_dir() => {
                if let Err(e) = walk(path, &mut found, true) {
                    error(format!("cannot list `{}`: {e}", path.display()));
                }
            }
            Ok(_) => {
                found.witnesses.insert(path.clone());
                let dir = match path.parent() {
                    Some(dir) if !dir.as_os_str().is_empty() => dir,
                    _ => Path::new("."),
                };
                // Receipts beside it only; an unlistable directory has none to give.
                let mut beside = Inputs::default();
                if walk(dir, &mut beside, false).is_ok() {
                    found.receipts.extend(beside.receipts);
                }
            }
            Err(e) => error(format!(
                "cannot read witness file `{}`: {e}",
                path.display()
            )),
        }
    }
    found
}

/// Collects the `*.witness.jsonl` and `*.receipt.json` regular files of `dir` and its
/// subdirectories (`deep`), or the `*.receipt.json` of `dir` alone; links are not followed.
fn walk(dir: &Path, found: &mut Inputs, deep: bool) -> std::io::Result<()> {
    let suffixes: &[&str] = if deep {
        &[".witness.jsonl", ".receipt.json"]
    } else {
        &[".receipt.json"]
    };
    for path in crate::common::files_ending(dir, suffixes, deep)? {
        if path.to_string_lossy().ends_with(".receipt.json") {
            found.receipts.insert(path);
        } else {
            found.witnesses.insert(path);
        }
    }
    Ok(())
}

/// Feeds one receipt's `run_id` and `started_at` to the reading. `Err`: it cannot be read or
/// is not JSON. A receipt without a `run_id` names no run and is passed over.
fn read_run(file: &Path, reading: &mut FlakeReading) -> Result<(), String> {
    let field = |others: &serde_json::Map<String, Value>, key: &str| {
        others.get(key).and_then(Value::as_str).map(str::to_string)
    };
    let (run_id, started_at) = match ReceiptScanner::new(file).scan(Wanted::default()) {
        Some(scan) => (
            field(&scan.others, "run_id"),
            field(&scan.others, "started_at"),
        ),
        None => {
            let bytes =
                read_bounded(file, "receipt", MAX_RECEIPT_BYTES).map_err(|e| format!("{e:#}"))?;
            seedledger_gate::close_ledger_bytes(&bytes)
                .map_err(|e| format!("receipt `{}`: {e}", file.display()))?;
            let value: Value = serde_json::from_slice(&bytes).unwrap_or(Value::Null);
            let text = |key: &str| value.get(key).and_then(Value::as_str).map(str::to_string);
            (text("run_id"), text("started_at"))
        }
    };
    if let Some(run_id) = run_id.filter(|id| !id.is_empty()) {
        reading.run(&run_id, started_at.as_deref());
    }
    Ok(())
}

/// What the lines of the first pass were, besides rows.
#[derive(Debug, Default)]
struct LineTally {
    /// Lines that are not rows (named up to `NAMED_MALFORMED`).
    malformed: usize,
    /// Remote rows left out for want of a valid signature, and the first reason.
    unauthenticated: usize,
    first_refusal: Option<String>,
    /// The second pass names nothing.
    quiet: bool,
}

impl LineTally {
    fn quiet() -> LineTally {
        LineTally {
            quiet: true,
            ..LineTally::default()
        }
    }
}

/// One pass over the witness file `file`: each row, authenticated when the repository
/// declares trusted keys, goes to `each`; malformed lines and refused remote rows are
/// counted (and named) in `tally`. With `wanted`, a line whose seed is not among them is
/// passed over unread.
fn pass(
    file: &Path,
    roles: &crate::common::keys::Roles,
    tally: &mut LineTally,
    wanted: Option<&[u64]>,
    mut each: impl FnMut(&seedledger_format::WitnessRow),
) -> Result<(), String> {
    let (reader, _) = open_bounded(file, "witness file", MAX_STREAMED_WITNESS_BYTES)
        .map_err(|e| format!("{e:#}"))?;
    let keys = roles.keys();
    let skip = |bytes: &[u8]| match (wanted, seedledger_format::witness_line_seed(bytes)) {
        (Some(wanted), Some(seed)) => wanted.binary_search(&seed).is_err(),
        _ => false,
    };
    // What authentication refused, decided on the threads that parse.
    let prepare = |it: &mut WitnessLine, text: &[u8], refused: &mut Option<String>| {
        *refused = None;
        if let (Some(keys), Ok(row)) = (keys, &it.row)
            && row.runner == Runner::Remote
        {
            let text = text.strip_suffix(b"\r").unwrap_or(text);
            let text = std::str::from_utf8(text).unwrap_or("");
            *refused = seedledger_gate::authenticate_row(text, keys).err();
        }
    };
    let read = ParallelLines::new().read(reader, skip, prepare, |it| {
        let Streamed::Line(it, _, refused) = it else {
            return true;
        };
        match (&it.row, refused) {
            (Ok(_), Some(why)) => {
                tally.unauthenticated += 1;
                tally
                    .first_refusal
                    .get_or_insert_with(|| format!("`{}` line {}: {why}", file.display(), it.line));
            }
            (Ok(row), None) => each(row),
            (Err(e), _) => {
                tally.malformed += 1;
                if !tally.quiet && tally.malformed <= NAMED_MALFORMED {
                    err_line(&format!(
                        "note: `{}` line {}: not a witness row, skipped: {e}",
                        file.display(),
                        it.line
                    ));
                }
            }
        }
        true
    });
    read.map(|_| ())
        .map_err(|e| format!("cannot read witness file `{}`: {e}", file.display()))
}

/// The notes on stderr: what was read, what was left out and why.
fn notes(
    reading: &FlakeReading,
    roles: &crate::common::keys::Roles,
    tally: &LineTally,
    inputs: &Inputs,
    patch: Option<&str>,
) {
    let n = reading.notes();
    let count = |n: u64, one: &str, many: &str| format!("{n} {}", if n == 1 { one } else { many });
    err_line(&format!(
        "note: {}, {}; {}",
        count(
            inputs.witnesses.len() as u64,
            "witness file",
            "witness files"
        ),
        count(inputs.receipts.len() as u64, "receipt", "receipts"),
        count(n.replay_rows, "replay row", "replay rows")
    ));
    err_line(&roles.note());
    if tally.malformed > NAMED_MALFORMED {
        err_line(&format!(
            "note: {} lines in all are not witness rows and were skipped ({} named above)",
            tally.malformed, NAMED_MALFORMED
        ));
    }
    if tally.unauthenticated > 0 {
        err_line(&format!(
            "note: {} remote rows left out: not signed by a key the trust file declares for the `remote` role (first: {})",
            tally.unauthenticated,
            tally.first_refusal.as_deref().unwrap_or("?")
        ));
    }
    if let Some(patch) = patch.filter(|_| n.other_patch > 0) {
        err_line(&format!(
            "note: {} rows left out: not of patch `{patch}`",
            n.other_patch
        ));
    }
    if n.unknown_runs > 0 {
        err_line(&format!(
            "note: {} fail rows are of runs whose receipt is not among the inputs: they count as fails, not as sightings (first/last seen)",
            n.unknown_runs
        ));
    }
    if n.undated_runs > 0 {
        err_line(&format!(
            "note: {} receipts have no RFC 3339 started_at: their runs date no sighting",
            n.undated_runs
        ));
    }
    for u in reading.unsigned() {
        err_line(&format!(
            "note: property `{}` seed {} ({}): {} replay rows but no failure signature (no fail row and no replayed_signature): no line",
            u.property, u.seed, u.scheme, u.replays
        ));
    }
}

/// Prints every line in `format`.
fn print_lines(reading: &FlakeReading, format: FlakeFormat) {
    let mut any = false;
    if format == FlakeFormat::Markdown {
        out_line(
            "| property | signature | seed | class | local | remote | first seen | last seen |",
        );
        out_line("|---|---|---:|---|---|---|---|---|");
    }
    for line in reading.lines() {
        any = true;
        match format {
            FlakeFormat::Human => print_human(&line),
            FlakeFormat::Json => {
                out_line(&serde_json::to_string(&json_line(&line)).unwrap_or_default())
            }
            FlakeFormat::Markdown => out_line(&markdown_row(&line)),
        }
    }
    if !any {
        match format {
            FlakeFormat::Markdown => {
                out_line("| (no failing seed has replay rows) | | | | | | | |");
            }
            _ => err_line(
                "note: no failing seed has replay rows (`cargo xtask prop reproduce --repeat K` writes them)",
            ),
        }
    }
}

/// `x` as a percentage with one decimal.
fn percent(x: f64) -> String {
    format!("{:.1}%", x * 100.0)
}

/// `[lo%, hi%]`.
fn interval_text(i: Interval) -> String {
    format!("[{}, {}]", percent(i.lo), percent(i.hi))
}

/// `20 replays, 5 fails, rate 25.0%, 95% CI [8.7%, 49.1%]` (and the one-sided bound when
/// nothing failed).
fn role_text(t: &Tally) -> String {
    let mut text = format!(
        "{} replays, {} fails, rate {}, 95% CI {}",
        t.replays,
        t.fails,
        t.rate().map_or("-".to_string(), percent),
        t.interval().map_or("-".to_string(), interval_text)
    );
    if let Some(u) = t.upper_bound() {
        text.push_str(&format!(", < {} (one-sided 95%)", percent(u)));
    }
    text
}

fn seen_text(line: &FlakeLine<'_>) -> String {
    match (line.first_seen, line.last_seen) {
        (Some(first), Some(last)) => format!("first seen {}, last seen {}", first.text, last.text),
        _ => "first and last seen unknown: no receipt of a run that showed it".to_string(),
    }
}

fn print_human(line: &FlakeLine<'_>) {
    let scheme = if line.scheme == seedledger_format::WitnessRow::SCHEME_WITHOUT_RNG {
        String::new()
    } else {
        format!(", rng {}", line.scheme)
    };
    out_line(&format!(
        "{} `{}` seed {}{scheme}: {} ({})",
        line.property,
        line.signature,
        line.seed,
        line.class,
        seen_text(line)
    ));
    for (role, tally) in FLAKE_ROLES.iter().zip(&line.roles) {
        if let Some(t) = tally {
            out_line(&format!("  {}: {}", role.as_str(), role_text(t)));
        }
    }
    if line.class != seedledger_format::flake::FlakeClass::Insufficient {
        return;
    }
    for (role, short) in FLAKE_ROLES.iter().zip(line.short) {
        if short > 0 {
            let runner = if *role == Runner::Remote {
                " --runner remote"
            } else {
                ""
            };
            out_line(&format!(
                "  needs {short} more replays on {}: cargo xtask prop reproduce --property {} --seed {} --repeat {short}{runner}",
                role.as_str(),
                line.property,
                line.seed
            ));
        }
    }
}

fn json_line<'a>(line: &FlakeLine<'a>) -> FlakeJsonLine<'a> {
    let mut runners = std::collections::BTreeMap::new();
    let mut replays_needed = std::collections::BTreeMap::new();
    for ((role, tally), short) in FLAKE_ROLES.iter().zip(&line.roles).zip(line.short) {
        let Some(t) = tally else { continue };
        let interval = t.interval().map_or([0.0, 1.0], |i| [i.lo, i.hi]);
        runners.insert(
            role.as_str(),
            FlakeRoleJson {
                replays: t.replays,
                fails: t.fails,
                rate: t.rate().unwrap_or(0.0),
                interval,
                upper_bound: t.upper_bound(),
            },
        );
        if short > 0 {
            replays_needed.insert(role.as_str(), short);
        }
    }
    FlakeJsonLine {
        property: line.property,
        signature: line.signature,
        seed: line.seed,
        class: line.class.as_str(),
        runners,
        rng: line.scheme,
        first_seen: line.first_seen.map(|s| s.text.as_str()),
        last_seen: line.last_seen.map(|s| s.text.as_str()),
        replays_needed,
    }
}

/// Text for a Markdown table cell: no line breaks, pipes escaped, in code.
fn cell_code(text: &str) -> String {
    let text = text.replace(['\n', '\r'], " ").replace('|', "\\|");
    if text.contains('`') {
        text
    } else {
        format!("`{text}`")
    }
}

fn markdown_row(line: &FlakeLine<'_>) -> String {
    let role = |t: &Option<Tally>| match t {
        None => "—".to_string(),
        Some(t) => format!(
            "{}/{} failed, {} {}",
            t.fails,
            t.replays,
            t.rate().map_or("-".to_string(), percent),
            t.interval().map_or("-".to_string(), interval_text)
        ),
    };
    let seen = |s: Option<&seedledger_gate::Started>| s.map_or("?".to_string(), |s| s.text.clone());
    format!(
        "| {} | {} | {} | {} | {} | {} | {} | {} |",
        cell_code(line.property),
        cell_code(line.signature),
        line.seed,
        line.class,
        role(&line.roles[0]),
        role(&line.roles[1]),
        seen(line.first_seen),
        seen(line.last_seen)
    )
}
