//! `prop clean`: retention for the evidence under OUT (default `ROOT/target/seedledger`).
//!
//! Every run of a property archives the receipt before it (`ID.<run>.receipt.json`) and
//! appends its rows to `ID.witness.jsonl`, so evidence grows with every run. `prop clean`
//! keeps, per patch directory and property, the current receipt and the `--keep-runs` newest
//! receipts in all, and removes the older ones with the rows of their runs (a merged
//! receipt's runs are its parts'). `--keep-patches N` keeps nothing but open receipts in the
//! patch directories past the N with the newest evidence.
//!
//! What it never removes: an open receipt (a run that stopped early, left a seed gap or lost
//! fields), which keeps its patch's freeze path disabled, so cleaning cannot hide a crash;
//! rows of runs no removed receipt names (replays, reproductions, other tools' rows, lines
//! that are not rows); lock files (a run may be opening one). It leaves alone a property
//! whose run holds its lock, or whose current receipt is open (its run may be under way, or
//! its supervisor still appending after a crash), and a receipt whose `property_id` does not
//! name its file.
//!
//! Holding the property's evidence lock, the witness file is rewritten holding that file's
//! append lock too, into a temporary file renamed over it; an appender that waited for the
//! lock appends to the new file (`seedledger_format::append_lines_at`). The rows go before
//! the receipts: a clean stopped half-way leaves receipts the next clean removes, never
//! rows without their receipt.

use super::Common;
use crate::common::{
    Format, MAX_RECEIPT_BYTES, MAX_STREAMED_WITNESS_BYTES, open_bounded, read_bounded,
};
use clap::Args;
use seedledger_format::ExitStatus;
use seedledger_runner::engine::{self, RunError};
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::{MetadataExt, PermissionsExt};
use std::path::{Path, PathBuf};
use std::time::SystemTime;

#[derive(Debug, Args)]
pub struct CleanArgs {
    #[command(flatten)]
    common: Common,
    /// Directory of receipts and witness rows [default: ROOT/target/seedledger].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// Receipts kept per patch and property, newest first, the current one included (open
    /// receipts are kept beyond this).
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..))]
    keep_runs: u64,
    /// Keep only the N patch directories with the newest evidence; in the others keep only
    /// open receipts and their runs' rows [default: keep every patch].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    keep_patches: Option<u64>,
    /// Say what would be removed; change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// What one step removed (or, on a dry run, would remove).
#[derive(Debug, Default)]
struct Removed {
    receipts: u64,
    rows: u64,
    bytes: u64,
}

impl Removed {
    fn add(&mut self, other: &Removed) {
        self.receipts += other.receipts;
        self.rows += other.rows;
        self.bytes += other.bytes;
    }
}

/// One line of `--format json`.
#[derive(Debug, Serialize)]
struct CleanLine<'a> {
    action: &'a str,
    path: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    property_id: Option<&'a str>,
    receipts_removed: u64,
    rows_removed: u64,
    bytes_freed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    dry_run: bool,
}

/// What retention reads of a receipt, and of a row (`run_id` alone).
#[derive(Debug, Deserialize)]
struct Ids {
    property_id: Option<String>,
    run_id: Option<String>,
    merge: Option<MergeIds>,
}

/// A merged receipt's parts: their runs wrote its rows.
#[derive(Debug, Deserialize)]
struct MergeIds {
    parts: Vec<PartIds>,
}

#[derive(Debug, Deserialize)]
struct PartIds {
    run_id: Option<String>,
}

/// One receipt of a patch directory.
#[derive(Debug)]
struct Held {
    path: PathBuf,
    runs: Vec<String>,
    open: bool,
    current: bool,
    modified: SystemTime,
    bytes: u64,
}

pub(super) fn clean(args: &CleanArgs) -> ExitStatus {
    let root = super::root_of(&args.common);
    let out = args
        .out
        .clone()
        .unwrap_or_else(|| root.join("target").join("seedledger"));
    let report = Report {
        format: args.common.format,
        dry_run: args.dry_run,
    };
    let mut patches = match patch_dirs(&out) {
        Ok(p) => p,
        Err(e) => return super::error(e),
    };
    patches.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let keep_patches = args
        .keep_patches
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    let keep_runs = usize::try_from(args.keep_runs).unwrap_or(usize::MAX);
    let mut total = Removed::default();
    let mut status = ExitStatus::Success;
    for (index, (dir, _)) in patches.iter().enumerate() {
        let keep = if index < keep_patches { keep_runs } else { 0 };
        let (removed, errors) = prune_patch(dir, keep, &report);
        total.add(&removed);
        for e in &errors {
            errln!("error: {e}");
        }
        if !errors.is_empty() {
            status = ExitStatus::Error;
        }
    }
    report.done(&out, &total);
    status
}

/// How the steps are printed.
struct Report {
    format: Format,
    dry_run: bool,
}

impl Report {
    fn step(
        &self,
        action: &str,
        path: &Path,
        property_id: Option<&str>,
        removed: &Removed,
        note: Option<&str>,
    ) {
        match self.format {
            Format::Human => {
                let who = property_id.map(|id| format!("/{id}")).unwrap_or_default();
                if action == "skip" {
                    outln!(
                        "{}{who}: skipped: {}",
                        path.display(),
                        note.unwrap_or_default()
                    );
                    return;
                }
                let verb = if self.dry_run {
                    "would remove"
                } else {
                    "removed"
                };
                let note = note.map(|n| format!("; {n}")).unwrap_or_default();
                outln!(
                    "{}{who}: {verb} {} receipt(s) and {} witness row(s) ({}){note}",
                    path.display(),
                    removed.receipts,
                    removed.rows,
                    bytes_text(removed.bytes)
                );
            }
            Format::Json => outln!(
                "{}",
                serde_json::to_string(&CleanLine {
                    action,
                    path: path.display().to_string(),
                    property_id,
                    receipts_removed: removed.receipts,
                    rows_removed: removed.rows,
                    bytes_freed: removed.bytes,
                    note,
                    dry_run: self.dry_run,
                })
                .unwrap_or_default()
            ),
        }
    }

    fn done(&self, out: &Path, total: &Removed) {
        match self.format {
            Format::Human => outln!(
                "{} {}: {} receipt(s), {} witness row(s), {}",
                if self.dry_run {
                    "would clean"
                } else {
                    "cleaned"
                },
                out.display(),
                total.receipts,
                total.rows,
                bytes_text(total.bytes)
            ),
            Format::Json => self.step("total", out, None, total, None),
        }
    }
}

fn bytes_text(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MiB", bytes as f64 / f64::from(1 << 20))
    } else {
        format!("{bytes} bytes")
    }
}

/// The patch directories under `out` with the newest modification time of their evidence
/// (none when `out` does not exist). A file gone while it is looked at is passed over.
fn patch_dirs(out: &Path) -> Result<Vec<(PathBuf, SystemTime)>, String> {
    let listed = |dir: &Path| {
        std::fs::read_dir(dir).map_err(|e| format!("cannot read `{}`: {e}", dir.display()))
    };
    if !out.exists() {
        return Ok(Vec::new());
    }
    let mut dirs = Vec::new();
    for entry in listed(out)? {
        let Ok(entry) = entry else { continue };
        if !entry.file_type().is_ok_and(|t| t.is_dir()) {
            continue;
        }
        let mut newest = None;
        for file in listed(&entry.path())? {
            let Ok(file) = file else { continue };
            if is_evidence(&file.file_name().to_string_lossy())
                && let Ok(modified) = file.metadata().and_then(|m| m.modified())
            {
                newest = newest.max(Some(modified));
            }
        }
        if let Some(newest) = newest {
            dirs.push((entry.path(), newest));
        }
    }
    Ok(dirs)
}

fn is_evidence(name: &str) -> bool {
    name.ends_with(".receipt.json") || name.ends_with(".witness.jsonl")
}

/// Prunes each property of one patch directory, keeping `keep` receipts per property (and
/// every open one). Returns what went and the errors met (the rest is still cleaned).
fn prune_patch(dir: &Path, keep: usize, report: &Report) -> (Removed, Vec<String>) {
    let (by_property, mut errors) = receipts_of(dir);
    let mut total = Removed::default();
    for (property_id, receipts) in by_property {
        match prune_property(dir, &property_id, receipts, keep, report) {
            Ok(removed) => total.add(&removed),
            Err(e) => errors.push(e),
        }
    }
    (total, errors)
}

/// The receipts of `dir` by property, and the errors of those that cannot be cleaned.
fn receipts_of(dir: &Path) -> (BTreeMap<String, Vec<Held>>, Vec<String>) {
    let mut by_property: BTreeMap<String, Vec<Held>> = BTreeMap::new();
    let mut errors = Vec::new();
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) => {
            return (
                by_property,
                vec![format!("cannot read `{}`: {e}", dir.display())],
            );
        }
    };
    for entry in entries.flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".receipt.json") || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        match held(&entry.path(), &name) {
            Ok((property_id, held)) => by_property.entry(property_id).or_default().push(held),
            Err(e) => errors.push(e),
        }
    }
    (by_property, errors)
}

/// Reads one receipt: its property, its runs, whether it is open.
fn held(path: &Path, name: &str) -> Result<(String, Held), String> {
    let shown = path.display();
    let not_cleaned = |why: String| format!("receipt `{shown}`: {why}; not cleaned");
    let bytes = read_bounded(path, "receipt", MAX_RECEIPT_BYTES).map_err(|e| format!("{e:#}"))?;
    let ids: Ids = serde_json::from_slice(&bytes).map_err(|e| not_cleaned(e.to_string()))?;
    let property_id = ids
        .property_id
        .ok_or_else(|| not_cleaned("field `property_id`: missing".into()))?;
    // The id names the files the clean rewrites: it must be an id, and this file's.
    seedledger_format::check_id("property id", &property_id)
        .map_err(|e| not_cleaned(format!("field `property_id`: {e}")))?;
    if !name.starts_with(&format!("{property_id}.")) {
        return Err(not_cleaned(format!(
            "field `property_id`: `{property_id}` does not name this file"
        )));
    }
    let open = seedledger_gate::close_ledger_bytes(&bytes).map_or(true, |c| c.status.is_open());
    let meta = std::fs::metadata(path).map_err(|e| format!("cannot read `{shown}`: {e}"))?;
    let mut runs: Vec<String> = ids.run_id.into_iter().collect();
    if let Some(merge) = ids.merge {
        runs.extend(merge.parts.into_iter().filter_map(|p| p.run_id));
    }
    let current = name == format!("{property_id}.receipt.json");
    Ok((
        property_id,
        Held {
            path: path.to_path_buf(),
            runs,
            open,
            current,
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            bytes: meta.len(),
        },
    ))
}

/// Keeps the current receipt, the newest others up to `keep` in all and every open one;
/// removes the rest, their runs' rows first.
fn prune_property(
    dir: &Path,
    property_id: &str,
    mut receipts: Vec<Held>,
    keep: usize,
    report: &Report,
) -> Result<Removed, String> {
    receipts.sort_by(|a, b| {
        (b.current, b.modified)
            .cmp(&(a.current, a.modified))
            .then_with(|| a.path.cmp(&b.path))
    });
    let (kept, gone): (Vec<Ranked>, Vec<Ranked>) = receipts
        .into_iter()
        .enumerate()
        .partition(|(i, r)| *i < keep || r.open);
    if gone.is_empty() {
        return Ok(Removed::default());
    }
    let skip = |why: &str| {
        report.step(
            "skip",
            dir,
            Some(property_id),
            &Removed::default(),
            Some(why),
        );
        Ok(Removed::default())
    };
    if kept.iter().any(|(_, r)| r.current && r.open) {
        return skip(
            "its current receipt is open (a run under way, or one that stopped): cleaned after its next run",
        );
    }
    let _lock = match report.dry_run {
        true => None,
        false => {
            let holder = format!("prop clean (pid {})", std::process::id());
            match engine::lock_evidence(dir, property_id, &holder) {
                Ok(lock) => Some(lock),
                Err(RunError::Locked { holder, .. }) => {
                    return skip(&format!("a run holds its lock ({holder})"));
                }
                Err(e) => return Err(e.to_string()),
            }
        }
    };
    let kept_runs: HashSet<&str> = kept
        .iter()
        .flat_map(|(_, r)| r.runs.iter().map(String::as_str))
        .collect();
    let runs: HashSet<&str> = gone
        .iter()
        .flat_map(|(_, r)| r.runs.iter().map(String::as_str))
        .filter(|run| !kept_runs.contains(run))
        .collect();
    let witnesses = dir.join(format!("{property_id}.witness.jsonl"));
    let mut removed = if runs.is_empty() || !witnesses.exists() {
        Removed::default()
    } else {
        prune_rows(&witnesses, &runs, report.dry_run, kept.is_empty())?
    };
    for (_, receipt) in &gone {
        if !report.dry_run {
            std::fs::remove_file(&receipt.path)
                .map_err(|e| format!("cannot remove `{}`: {e}", receipt.path.display()))?;
        }
        removed.receipts += 1;
        removed.bytes += receipt.bytes;
    }
    if kept.is_empty() && !report.dry_run {
        // No receipt left: the spare a run writes its next open receipt into goes too.
        let current = dir.join(format!("{property_id}.receipt.json"));
        let _ = std::fs::remove_file(engine::spare_receipt_path(&current));
    }
    if !report.dry_run {
        // The removals reach the disk with the directory.
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    let open_kept = kept.iter().filter(|(i, r)| r.open && *i >= keep).count();
    let note = (open_kept > 0).then(|| {
        format!("kept {open_kept} open receipt(s) beyond the runs kept: an open receipt is never removed")
    });
    report.step("prune", dir, Some(property_id), &removed, note.as_deref());
    Ok(removed)
}

/// A receipt with its place, newest first.
type Ranked = (usize, Held);

/// Rewrites `witnesses` without the rows of `runs`, atomically, holding the file's append
/// lock from the first byte read to the rename; removes the file when nothing is left and
/// `drop_empty`. Returns what went.
fn prune_rows(
    witnesses: &Path,
    runs: &HashSet<&str>,
    dry_run: bool,
    drop_empty: bool,
) -> Result<Removed, String> {
    let shown = witnesses.display();
    let failed = |e: std::io::Error| format!("cannot rewrite witness file `{shown}`: {e}");
    let (file, _) = open_bounded(witnesses, "witness file", MAX_STREAMED_WITNESS_BYTES)
        .map_err(|e| format!("{e:#}"))?;
    if !dry_run {
        file.get_ref().lock().map_err(failed)?;
    }
    let mode = file.get_ref().metadata().map_err(failed)?.mode() & 0o777;
    let mut removed = Removed::default();
    let mut kept = 0u64;
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut filter =
        |to: &mut dyn Write| filter_rows(&mut reader, to, runs, &mut removed, &mut kept);
    if dry_run {
        filter(&mut std::io::sink()).map_err(failed)?;
        return Ok(removed);
    }
    seedledger_format::write_atomic_with(witnesses, filter).map_err(failed)?;
    if kept == 0 && drop_empty {
        std::fs::remove_file(witnesses).map_err(failed)?;
    } else if mode != seedledger_format::FILE_MODE {
        std::fs::set_permissions(witnesses, std::fs::Permissions::from_mode(mode))
            .map_err(failed)?;
    }
    // The old file's lock goes with `reader`, after the rename: an appender that waited for
    // it finds the path names another file and appends there.
    Ok(removed)
}

/// Copies the lines of `from` to `to` but the rows of `runs`, counting what it leaves out
/// and the bytes it keeps.
fn filter_rows(
    from: &mut impl BufRead,
    to: &mut dyn Write,
    runs: &HashSet<&str>,
    removed: &mut Removed,
    kept: &mut u64,
) -> std::io::Result<()> {
    let mut line = Vec::new();
    loop {
        line.clear();
        if from.read_until(b'\n', &mut line)? == 0 {
            return Ok(());
        }
        // A torn last line (a crash mid-append) and lines that are not rows are kept as
        // they are: they are not this command's to judge.
        let gone = line.ends_with(b"\n")
            && serde_json::from_slice::<Ids>(&line)
                .ok()
                .and_then(|ids| ids.run_id)
                .is_some_and(|run| runs.contains(run.as_str()));
        if gone {
            removed.rows += 1;
            removed.bytes += line.len() as u64;
        } else {
            *kept += line.len() as u64;
            to.write_all(&line)?;
        }
    }
}
