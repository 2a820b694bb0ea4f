//! `prop clean`: retention for the evidence under OUT (default `ROOT/target/seedledger`).
//!
//! Every run of a property archives the receipt before it (`ID.<run>.receipt.json`) and
//! appends its rows to `ID.witness.jsonl`, so evidence grows with every run. `prop clean`
//! keeps, per patch directory and property, the current receipt and the `--keep-runs` newest
//! receipts in all, and removes the older ones with their runs' witness rows. It never
//! removes an open receipt (a run that stopped early, left a seed gap or lost fields): an
//! open receipt keeps its patch's freeze path disabled, and cleaning must not hide a crash.
//! Rows of runs no removed receipt names (replays, reproductions, other tools' rows, lines
//! that are not JSON) are kept. `--keep-patches N` removes the evidence of whole patch
//! directories but the N with the newest. A property whose run holds its lock (`ID.lock`) is
//! skipped; lock files are never removed (a run may be opening one).
//!
//! The witness file is rewritten atomically (a temporary file, fsynced, renamed over it)
//! before the receipts go: a clean stopped half-way leaves receipts whose rows are gone,
//! which the next clean removes, and never rows without their receipt's account of them.

use super::Common;
use crate::common::{
    Format, MAX_RECEIPT_BYTES, MAX_STREAMED_WITNESS_BYTES, open_bounded, read_bounded,
};
use clap::Args;
use seedledger_format::ExitStatus;
use serde::{Deserialize, Serialize};
use std::collections::{BTreeMap, HashSet};
use std::fs::File;
use std::io::{BufRead, BufReader, Write};
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
    /// Keep only the N patch directories with the newest evidence; the others are removed
    /// whole (their receipts and witness files; lock files stay) [default: keep every patch].
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    keep_patches: Option<u64>,
    /// Say what would be removed; change nothing.
    #[arg(long)]
    dry_run: bool,
}

/// What one step removed (or, on a dry run, would remove).
#[derive(Debug, Default, Serialize)]
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
    path: &'a Path,
    #[serde(skip_serializing_if = "Option::is_none")]
    property_id: Option<&'a str>,
    receipts_removed: u64,
    rows_removed: u64,
    bytes_freed: u64,
    #[serde(skip_serializing_if = "Option::is_none")]
    note: Option<&'a str>,
    dry_run: bool,
}

/// The two fields of a receipt or a row that retention needs.
#[derive(Debug, Deserialize)]
struct Ids {
    property_id: Option<String>,
    run_id: Option<String>,
}

/// A receipt with its place, newest first.
type Ranked = (usize, Held);

/// One receipt of a patch directory.
#[derive(Debug)]
struct Held {
    path: PathBuf,
    run_id: Option<String>,
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
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
            report.done(&out, &Removed::default());
            return ExitStatus::Success;
        }
        Err(e) => return super::error(format!("cannot read `{}`: {e}", out.display())),
    };
    let mut total = Removed::default();
    let mut status = ExitStatus::Success;
    patches.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
    let keep = args
        .keep_patches
        .map_or(usize::MAX, |n| usize::try_from(n).unwrap_or(usize::MAX));
    for (index, (dir, _)) in patches.iter().enumerate() {
        let step = if index >= keep {
            remove_patch(dir, &report)
        } else {
            prune_patch(dir, args.keep_runs, &report)
        };
        match step {
            Ok(removed) => total.add(&removed),
            Err(e) => {
                errln!("error: {e}");
                status = ExitStatus::Error;
            }
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
                let verb = if self.dry_run {
                    "would remove"
                } else {
                    "removed"
                };
                let what = match action {
                    "remove_patch" => format!("{verb} the patch directory"),
                    "skip" => "skipped".to_string(),
                    _ => format!(
                        "{verb} {} receipt(s) and {} witness row(s)",
                        removed.receipts, removed.rows
                    ),
                };
                let who = property_id.map(|id| format!("/{id}")).unwrap_or_default();
                if action == "skip" {
                    outln!(
                        "{}{who}: skipped: {}",
                        path.display(),
                        note.unwrap_or_default()
                    );
                    return;
                }
                let note = note.map(|n| format!("; {n}")).unwrap_or_default();
                outln!(
                    "{}{who}: {what} ({}){note}",
                    path.display(),
                    bytes_text(removed.bytes)
                );
            }
            Format::Json => outln!(
                "{}",
                serde_json::to_string(&CleanLine {
                    action,
                    path,
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

/// The patch directories under `out` with the newest modification time of their evidence.
fn patch_dirs(out: &Path) -> std::io::Result<Vec<(PathBuf, SystemTime)>> {
    let mut dirs = Vec::new();
    for entry in std::fs::read_dir(out)? {
        let entry = entry?;
        if !entry.file_type()?.is_dir() {
            continue;
        }
        let mut newest = None;
        for file in std::fs::read_dir(entry.path())? {
            let file = file?;
            if is_evidence(&file.file_name().to_string_lossy()) {
                let modified = file.metadata()?.modified()?;
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

/// Whether a run holds the lock of `ID.lock` in `dir` (a missing lock file is held by none).
fn locked(lock: &Path) -> Result<Option<File>, String> {
    match File::options().read(true).write(true).open(lock) {
        Ok(file) => match file.try_lock() {
            Ok(()) => Ok(Some(file)),
            Err(std::fs::TryLockError::WouldBlock) => Err("a run holds its lock".to_string()),
            Err(std::fs::TryLockError::Error(e)) => {
                Err(format!("cannot lock `{}`: {e}", lock.display()))
            }
        },
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(None),
        Err(e) => Err(format!("cannot open `{}`: {e}", lock.display())),
    }
}

/// Removes a whole patch directory's evidence (its receipts and witness files; lock files
/// stay), unless a run holds one of its locks.
fn remove_patch(dir: &Path, report: &Report) -> Result<Removed, String> {
    let shown = dir.display();
    let mut files = Vec::new();
    let mut removed = Removed::default();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("cannot read `{shown}`: {e}"))? {
        let entry = entry.map_err(|e| format!("cannot read `{shown}`: {e}"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !(is_evidence(&name) || name.ends_with(".lock")) || !entry.path().is_file() {
            continue;
        }
        if name.ends_with(".lock") {
            if let Err(why) = locked(&entry.path()) {
                report.step("skip", dir, None, &Removed::default(), Some(&why));
                return Ok(Removed::default());
            }
            // Lock files stay: removing one that a starting run has open would let two runs
            // each lock a different file of the same name.
            continue;
        }
        let bytes = entry.metadata().map(|m| m.len()).unwrap_or(0);
        removed.bytes += bytes;
        if name.ends_with(".receipt.json") {
            removed.receipts += 1;
        } else if name.ends_with(".witness.jsonl") {
            removed.rows += count_lines(&entry.path())?;
        }
        files.push(entry.path());
    }
    if !report.dry_run {
        for file in &files {
            std::fs::remove_file(file)
                .map_err(|e| format!("cannot remove `{}`: {e}", file.display()))?;
        }
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    report.step("remove_patch", dir, None, &removed, None);
    Ok(removed)
}

fn count_lines(path: &Path) -> Result<u64, String> {
    let (file, _) = open_bounded(path, "witness file", MAX_STREAMED_WITNESS_BYTES)
        .map_err(|e| format!("{e:#}"))?;
    let mut reader = BufReader::new(file);
    let mut lines = 0;
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) => return Ok(lines),
            Ok(_) => lines += u64::from(line.ends_with(b"\n")),
            Err(e) => return Err(format!("cannot read `{}`: {e}", path.display())),
        }
    }
}

/// Prunes each property of one patch directory.
fn prune_patch(dir: &Path, keep_runs: u64, report: &Report) -> Result<Removed, String> {
    let mut by_property: BTreeMap<String, Vec<Held>> = BTreeMap::new();
    let shown = dir.display();
    for entry in std::fs::read_dir(dir).map_err(|e| format!("cannot read `{shown}`: {e}"))? {
        let entry = entry.map_err(|e| format!("cannot read `{shown}`: {e}"))?;
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.ends_with(".receipt.json") || !entry.file_type().is_ok_and(|t| t.is_file()) {
            continue;
        }
        let path = entry.path();
        let bytes =
            read_bounded(&path, "receipt", MAX_RECEIPT_BYTES).map_err(|e| format!("{e:#}"))?;
        let ids: Ids = serde_json::from_slice(&bytes).map_err(|e| {
            format!(
                "receipt `{}`: {e}; not cleaned (remove it by hand if it is not evidence)",
                path.display()
            )
        })?;
        let Some(property_id) = ids.property_id else {
            return Err(format!(
                "receipt `{}`: field `property_id`: missing; not cleaned",
                path.display()
            ));
        };
        let open = seedledger_gate::close_ledger_bytes(&bytes).map_or(true, |c| c.status.is_open());
        let meta = entry
            .metadata()
            .map_err(|e| format!("cannot read `{}`: {e}", path.display()))?;
        let current = name == format!("{property_id}.receipt.json");
        by_property.entry(property_id).or_default().push(Held {
            path,
            run_id: ids.run_id,
            open,
            current,
            modified: meta.modified().unwrap_or(SystemTime::UNIX_EPOCH),
            bytes: meta.len(),
        });
    }
    let mut total = Removed::default();
    for (property_id, receipts) in by_property {
        let removed = prune_property(dir, &property_id, receipts, keep_runs, report)?;
        total.add(&removed);
    }
    Ok(total)
}

/// Keeps the current receipt, the newest others up to `keep_runs` in all and every open one;
/// removes the rest, their runs' rows first.
fn prune_property(
    dir: &Path,
    property_id: &str,
    mut receipts: Vec<Held>,
    keep_runs: u64,
    report: &Report,
) -> Result<Removed, String> {
    receipts.sort_by(|a, b| b.current.cmp(&a.current).then(b.modified.cmp(&a.modified)));
    let keep = usize::try_from(keep_runs).unwrap_or(usize::MAX);
    let (kept, gone): (Vec<Ranked>, Vec<Ranked>) = receipts
        .into_iter()
        .enumerate()
        .partition(|(i, r)| *i < keep || r.open);
    if gone.is_empty() {
        return Ok(Removed::default());
    }
    let _lock = match locked(&dir.join(format!("{property_id}.lock"))) {
        Ok(lock) => lock,
        Err(why) => {
            report.step(
                "skip",
                dir,
                Some(property_id),
                &Removed::default(),
                Some(&why),
            );
            return Ok(Removed::default());
        }
    };
    let kept_runs: HashSet<&str> = kept
        .iter()
        .filter_map(|(_, r)| r.run_id.as_deref())
        .collect();
    let runs: HashSet<&str> = gone
        .iter()
        .filter_map(|(_, r)| r.run_id.as_deref())
        .filter(|run| !kept_runs.contains(run))
        .collect();
    let witnesses = dir.join(format!("{property_id}.witness.jsonl"));
    let mut removed = if runs.is_empty() || !witnesses.exists() {
        Removed::default()
    } else {
        prune_rows(&witnesses, &runs, report.dry_run)?
    };
    for (_, receipt) in &gone {
        if !report.dry_run {
            std::fs::remove_file(&receipt.path)
                .map_err(|e| format!("cannot remove `{}`: {e}", receipt.path.display()))?;
        }
        removed.receipts += 1;
        removed.bytes += receipt.bytes;
    }
    if !report.dry_run {
        // The removals reach the disk with the directory.
        let _ = File::open(dir).and_then(|d| d.sync_all());
    }
    let open_kept = kept.iter().filter(|(i, r)| r.open && *i >= keep).count();
    let note = (open_kept > 0).then(|| {
        format!(
            "kept {open_kept} open receipt(s) beyond --keep-runs: an open receipt is never removed"
        )
    });
    report.step("prune", dir, Some(property_id), &removed, note.as_deref());
    Ok(removed)
}

/// Rewrites `witnesses` without the rows of `runs` (atomically); returns what went.
fn prune_rows(witnesses: &Path, runs: &HashSet<&str>, dry_run: bool) -> Result<Removed, String> {
    let shown = witnesses.display();
    let (file, _) = open_bounded(witnesses, "witness file", MAX_STREAMED_WITNESS_BYTES)
        .map_err(|e| format!("{e:#}"))?;
    let mut removed = Removed::default();
    let mut reader = BufReader::with_capacity(1 << 20, file);
    let mut filter = |to: &mut dyn Write| filter_rows(&mut reader, to, runs, &mut removed);
    let done = if dry_run {
        filter(&mut std::io::sink())
    } else {
        seedledger_format::write_atomic_with(witnesses, filter)
    };
    done.map_err(|e| format!("cannot rewrite witness file `{shown}`: {e}"))?;
    Ok(removed)
}

/// Copies the lines of `from` to `to` but the rows of `runs`, counting what it leaves out.
fn filter_rows(
    from: &mut impl BufRead,
    to: &mut dyn Write,
    runs: &HashSet<&str>,
    removed: &mut Removed,
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
            to.write_all(&line)?;
        }
    }
}
