//! `cargo xtask gate merge`: the file side of combining the parts of one property's split plan
//! (`prop run --partition`). Reads the part receipts and the witness file beside each, checks
//! each part against its own rows, lets the gate decide (`seedledger_gate::merge_parts`), and
//! writes the merged receipt and the merged witness file — the parts' witness files one after
//! another, byte for byte (signed rows stay valid) — into OUT/PATCH/.

use crate::common::{
    Format, MAX_RECEIPT_BYTES, MAX_STREAMED_WITNESS_BYTES, MAX_WITNESS_BYTES, open_bounded,
    read_bounded,
};
use clap::Args;
use seedledger_format::{ExitStatus, LedgerScan, Receipt, Wanted, complete_lines, sha256_hex};
use seedledger_gate::{
    CloseStatus, Closing, MergePart, Merged, close_ledger_text, close_scan, merge_parts,
    verify_receipt, witness_lines_from_bytes,
};
use serde::Serialize;
use std::path::{Path, PathBuf};

#[derive(Debug, Args)]
pub struct MergeArgs {
    /// Output format.
    #[arg(long, value_enum, default_value_t = Format::Human)]
    format: Format,
    /// Where the merged receipt and witness file go: OUT/PATCH/ID.receipt.json and
    /// OUT/PATCH/ID.witness.jsonl [default: target/seedledger/merged].
    #[arg(long, value_name = "DIR")]
    out: Option<PathBuf>,
    /// The part receipts of one property (each with its `<property>.witness.jsonl` beside
    /// it), in any order.
    #[arg(required = true, value_name = "PART_RECEIPT")]
    parts: Vec<PathBuf>,
}

/// `gate merge --format json`: the one line printed.
#[derive(Debug, Serialize)]
struct MergeLine<'a> {
    /// True when the merged receipt was written.
    merged: bool,
    /// Why the parts were refused (nothing written); null when merged.
    refusal: Option<&'a str>,
    /// The merged receipt and witness file; null when refused.
    receipt: Option<String>,
    witnesses: Option<String>,
    /// The merged receipt's status as `gate close` prints it, and its detail.
    status: Option<&'a str>,
    detail: Option<&'a str>,
    /// Why the merged receipt is open (missing parts, parts that stopped early).
    open: &'a [String],
    /// Parts merged, of how many.
    parts: usize,
    total: Option<u64>,
}

/// One part as read from disk.
struct ReadPart {
    file: PathBuf,
    shown: String,
    receipt: Receipt,
    digest: String,
    witnesses: PathBuf,
}

pub fn merge(args: &MergeArgs) -> ExitStatus {
    match run(args) {
        Ok(status) => status,
        Err(e) => {
            errln!("error: {e:#}");
            ExitStatus::Error
        }
    }
}

fn run(args: &MergeArgs) -> anyhow::Result<ExitStatus> {
    let mut read: Vec<ReadPart> = Vec::with_capacity(args.parts.len());
    for file in &args.parts {
        read.push(read_part(file)?);
    }
    // A part whose receipt disagrees with its own rows is not evidence of anything. Checked
    // as `gate close --verify` checks it: as streams, in memory bounded independent of the
    // rows; only a part the streams cannot vouch for is read whole, to name the
    // disagreement (or the error).
    for part in &read {
        // The receipt the streams read is the one merged: its bytes still hash alike.
        if super::reading::agrees_beside(&part.file)
            && read_bounded(&part.file, "receipt", MAX_RECEIPT_BYTES)
                .is_ok_and(|bytes| format!("sha256:{}", sha256_hex(&bytes)) == part.digest)
        {
            continue;
        }
        let bytes = read_bounded(&part.witnesses, "witness file", MAX_WITNESS_BYTES)?;
        let lines = witness_lines_from_bytes(complete_lines(&bytes));
        if let Err(why) = verify_receipt(&part.receipt, &lines) {
            return Ok(refuse(
                args.format,
                &format!(
                    "part `{}` disagrees with its witness rows in `{}`: {why}",
                    part.shown,
                    part.witnesses.display()
                ),
            ));
        }
    }
    let parts: Vec<MergePart<'_>> = read
        .iter()
        .map(|p| MergePart {
            file: &p.shown,
            receipt: &p.receipt,
            receipt_digest: &p.digest,
        })
        .collect();
    let now = seedledger_format::format_rfc3339(crate::common::store::now());
    let mut merged = match merge_parts(&parts, &merge_run_id(), &now) {
        Ok(m) => m,
        Err(refusal) => return Ok(refuse(args.format, &refusal.to_string())),
    };
    let receipt = &merged.receipt;
    let dir = args
        .out
        .clone()
        .unwrap_or_else(|| PathBuf::from("target/seedledger/merged"))
        .join(&receipt.patch_id);
    let receipt_path = dir.join(format!("{}.receipt.json", receipt.property_id));
    let witness_path = dir.join(format!("{}.witness.jsonl", receipt.property_id));
    let same = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    };
    for part in &read {
        if same(&receipt_path, Path::new(&part.shown)) || same(&witness_path, &part.witnesses) {
            anyhow::bail!(
                "--out `{}` holds part `{}`: the merged files would replace it; merge into another directory",
                dir.display(),
                part.shown
            );
        }
    }
    std::fs::create_dir_all(&dir)
        .map_err(|e| anyhow::anyhow!("failed to create `{}`: {e}", dir.display()))?;
    // Rows first: a merged receipt is never on disk without its rows.
    let order: Vec<&Path> = merged
        .order
        .iter()
        .map(|&at| read[at].witnesses.as_path())
        .collect();
    concatenate(&order, &witness_path)?;
    let text = receipt_text(&mut merged.receipt);
    seedledger_format::write_atomic(&receipt_path, text.as_bytes())
        .map_err(|e| anyhow::anyhow!("failed to write `{}`: {e}", receipt_path.display()))?;
    let closing = close_text(&text)?;
    print_merged(args.format, &merged, &receipt_path, &witness_path, &closing);
    Ok(if closing.status.is_open() {
        ExitStatus::No
    } else {
        ExitStatus::Success
    })
}

/// Says what was merged where, and how the merged receipt closes.
fn print_merged(
    format: Format,
    merged: &Merged,
    receipt_path: &Path,
    witness_path: &Path,
    closing: &Closing,
) {
    let receipt = &merged.receipt;
    let total = receipt.merge.as_ref().map(|m| m.total);
    let (receipt_shown, witness_shown) = (
        receipt_path.display().to_string(),
        witness_path.display().to_string(),
    );
    match format {
        Format::Human => {
            outln!(
                "merged {} of {} parts of {} ({} of {} planned seeds attempted) into {receipt_shown}",
                merged.order.len(),
                total.unwrap_or(0),
                receipt.property_id,
                receipt.attempted_seeds.len(),
                receipt.planned_seeds.len(),
            );
            outln!("witness rows: {witness_shown}");
            if closing.status == CloseStatus::FreezeEligible {
                outln!("{receipt_shown}: {}", closing.status);
            } else {
                outln!("{receipt_shown}: {} ({})", closing.status, closing.detail);
            }
            for why in &merged.open {
                outln!("open: {why}");
            }
        }
        Format::Json => print_json(&MergeLine {
            merged: true,
            refusal: None,
            receipt: Some(receipt_shown),
            witnesses: Some(witness_shown),
            status: Some(closing.status.as_str()),
            detail: Some(&closing.detail),
            open: &merged.open,
            parts: merged.order.len(),
            total,
        }),
    }
}

fn read_part(file: &Path) -> anyhow::Result<ReadPart> {
    let shown = file.display().to_string();
    let bytes = read_bounded(file, "receipt", MAX_RECEIPT_BYTES)?;
    let text =
        std::str::from_utf8(&bytes).map_err(|_| anyhow::anyhow!("receipt `{shown}`: not UTF-8"))?;
    let receipt = Receipt::parse(text).map_err(|e| anyhow::anyhow!("receipt `{shown}`: {e}"))?;
    let witnesses = file.with_file_name(format!("{}.witness.jsonl", receipt.property_id));
    Ok(ReadPart {
        file: file.to_path_buf(),
        digest: format!("sha256:{}", sha256_hex(&bytes)),
        shown,
        receipt,
        witnesses,
    })
}

/// `receipt.to_json_pretty()`, byte for byte, without putting its seed lists through
/// `serde_json::Value` (about 32 bytes a seed): the receipt is written with each non-empty
/// list standing in as `[0]`, and the list's text is put in place of that.
fn receipt_text(receipt: &mut Receipt) -> String {
    use std::fmt::Write as _;
    let stand_in = |list: &mut Vec<u64>| {
        let kept = std::mem::take(list);
        if !kept.is_empty() {
            list.push(0);
        }
        kept
    };
    let lists = [
        ("planned_seeds", stand_in(&mut receipt.planned_seeds)),
        ("attempted_seeds", stand_in(&mut receipt.attempted_seeds)),
        ("failing_seeds", stand_in(&mut receipt.failing_seeds)),
    ];
    let mut text = receipt.to_json_pretty();
    let [planned, attempted, failing] = lists;
    receipt.planned_seeds = planned.1;
    receipt.attempted_seeds = attempted.1;
    receipt.failing_seeds = failing.1;
    for (key, seeds) in [
        (planned.0, &receipt.planned_seeds),
        (attempted.0, &receipt.attempted_seeds),
        (failing.0, &receipt.failing_seeds),
    ] {
        if seeds.is_empty() {
            continue;
        }
        // A top-level member is on a line of its own, indented two spaces; string values
        // hold no newline, so this is the member itself.
        let stood_in = format!("\n  \"{key}\": [0]");
        let Some(at) = text.find(&stood_in) else {
            return receipt.to_json_pretty();
        };
        let mut list = String::with_capacity(seeds.len() * 9 + 2);
        list.push('[');
        for (i, seed) in seeds.iter().enumerate() {
            if i > 0 {
                list.push_str(", ");
            }
            let _ = write!(list, "{seed}");
        }
        list.push(']');
        let start = at + stood_in.len() - 3;
        text.replace_range(start..start + 3, &list);
    }
    text
}

/// The merged receipt's text closed as `gate close` closes it: scanned (its seed lists never
/// parsed into values), or, should the scan not read it, read whole.
fn close_text(text: &str) -> anyhow::Result<Closing> {
    let scan = |wanted| LedgerScan::read(text.as_bytes(), wanted);
    if let Ok(first) = scan(Wanted::default())
        && let Ok(closing) = close_scan(&first, scan)
    {
        return Ok(closing);
    }
    close_ledger_text(text).map_err(|e| anyhow::anyhow!("{e}"))
}

/// Writes the complete lines of each file in `files`, in order, to `to`, atomically (a torn
/// last line — a crash in the middle of an append — is no row of anyone's and is left out:
/// `complete_lines`). Each file is copied as a stream; only its last line is held until its
/// end shows whether it is whole.
fn concatenate(files: &[&Path], to: &Path) -> anyhow::Result<()> {
    let dir = to.parent().unwrap_or(Path::new("."));
    let write_err = |e: std::io::Error| anyhow::anyhow!("failed to write `{}`: {e}", to.display());
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(write_err)?;
    // The permissions the runner gives a witness file (a temporary file is private).
    if let Some(first) = files.first()
        && let Ok(meta) = std::fs::metadata(first)
    {
        tmp.as_file()
            .set_permissions(meta.permissions())
            .map_err(write_err)?;
    }
    for file in files {
        copy_complete_lines(file, tmp.as_file_mut()).map_err(|e| match e {
            Copy::Read(e) => e,
            Copy::Write(e) => write_err(e),
        })?;
    }
    tmp.as_file().sync_all().map_err(write_err)?;
    tmp.persist(to).map_err(|e| write_err(e.error))?;
    if let Ok(d) = std::fs::File::open(dir) {
        let _ = d.sync_all();
    }
    Ok(())
}

/// Why [`copy_complete_lines`] failed.
enum Copy {
    Read(anyhow::Error),
    Write(std::io::Error),
}

/// Copies the witness file at `from` (read under `read_bounded`'s rules) to `to`, as
/// `complete_lines` of its bytes: all of it, except a last line without its newline that is
/// not a whole JSON value. Holds a read buffer and the line being read, never the file.
fn copy_complete_lines(from: &Path, to: &mut impl std::io::Write) -> Result<(), Copy> {
    copy_in_pieces(from, to, 1 << 20)
}

/// [`copy_complete_lines`] reading `piece` bytes at a time.
fn copy_in_pieces(from: &Path, to: &mut impl std::io::Write, piece: usize) -> Result<(), Copy> {
    use std::io::Read as _;
    let shown = from.display();
    let cannot =
        |e: std::io::Error| Copy::Read(anyhow::anyhow!("cannot read witness file `{shown}`: {e}"));
    let (mut file, _) =
        open_bounded(from, "witness file", MAX_STREAMED_WITNESS_BYTES).map_err(Copy::Read)?;
    let mut buf = vec![0u8; piece.max(1)];
    // The bytes after the last newline written, not yet known to be a whole line.
    let mut pending: Vec<u8> = Vec::new();
    let mut total = 0u64;
    loop {
        let n = match file.read(&mut buf) {
            Ok(0) => break,
            Ok(n) => n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(cannot(e)),
        };
        total += n as u64;
        let chunk = &buf[..n];
        match chunk.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                to.write_all(&pending).map_err(Copy::Write)?;
                pending.clear();
                to.write_all(&chunk[..=last]).map_err(Copy::Write)?;
                pending.extend_from_slice(&chunk[last + 1..]);
            }
            None => pending.extend_from_slice(chunk),
        }
    }
    if total > MAX_STREAMED_WITNESS_BYTES {
        return Err(Copy::Read(anyhow::anyhow!(
            "cannot read witness file `{shown}`: it grew past the {MAX_STREAMED_WITNESS_BYTES} bytes a witness file may have"
        )));
    }
    if !pending.is_empty() && !complete_lines(&pending).is_empty() {
        to.write_all(&pending).map_err(Copy::Write)?;
    }
    Ok(())
}

fn refuse(format: Format, why: &str) -> ExitStatus {
    match format {
        Format::Human => outln!("merge refused: {why}"),
        Format::Json => print_json(&MergeLine {
            merged: false,
            refusal: Some(why),
            receipt: None,
            witnesses: None,
            status: None,
            detail: None,
            open: &[],
            parts: 0,
            total: None,
        }),
    }
    ExitStatus::No
}

fn print_json(line: &MergeLine<'_>) {
    outln!("{}", serde_json::to_string(line).unwrap_or_default());
}

/// A new run id for the merged receipt: `merge-<nanoseconds, hex>-<pid>`.
fn merge_run_id() -> String {
    let nanos = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_nanos());
    format!("merge-{nanos:x}-{}", std::process::id())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// `receipt_text` is `to_json_pretty`, byte for byte: a passing and a failing receipt,
    /// empty lists, and a string that holds what a list's line looks like.
    #[test]
    fn a_receipt_written_without_values_is_to_json_pretty() {
        let text = r#"{"patch_id": "x", "property_id": "p", "planned_seeds": [1, 2, 3, 18446744073709551615],
            "attempted_seeds": [1, 2, 3], "failing_seed": 2, "shrink_stable": false,
            "fixture_hash": "sha256:e", "stopped_early": true, "oracle_source": "human_reviewed",
            "failing_seeds": [2, 3], "verdicts": ".FF", "run_id": "\n  \"planned_seeds\": [0]"}"#;
        let base = Receipt::parse(text).unwrap();
        let mut cases = vec![base.clone()];
        let mut passing = base.clone();
        passing.failing_seed = None;
        passing.failing_seeds.clear();
        cases.push(passing);
        let mut empty = base;
        empty.planned_seeds.clear();
        empty.attempted_seeds.clear();
        empty.failing_seeds.clear();
        cases.push(empty);
        for mut receipt in cases {
            let want = receipt.to_json_pretty();
            assert_eq!(receipt_text(&mut receipt), want);
            assert_eq!(receipt.to_json_pretty(), want, "the lists are put back");
        }
    }

    /// The streamed copy writes exactly `complete_lines` of the file, whatever the pieces.
    #[test]
    fn a_streamed_copy_is_complete_lines_of_the_file() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("w.witness.jsonl");
        let cases: &[&[u8]] = &[
            b"",
            b"\n",
            b"{\"a\": 1}\n{\"b\": 2}\n",
            b"{\"a\": 1}\n{\"b\": 2}",
            b"{\"a\": 1}\n{\"b\": ",
            b"{\"b\": ",
            b"{\"a\": 1}",
            b"{\"a\": 1}\n\n{\"a\": 1}\nnot json",
        ];
        for case in cases {
            std::fs::write(&file, case).unwrap();
            for piece in [1, 2, 3, 7, 1 << 20] {
                let mut out = Vec::new();
                assert!(copy_in_pieces(&file, &mut out, piece).is_ok());
                assert_eq!(
                    out,
                    complete_lines(case),
                    "{:?} in pieces of {piece}",
                    String::from_utf8_lossy(case)
                );
            }
        }
    }
}
