//! `gate cite`: the receipts, their rows and the batch read as streams, the decision, and the signed citation written to the store.

use super::reading::{Batch, ReceiptFile, Scratch};
use super::*;
use seedledger_gate::{CiteDecided, CiteReading};

/// `gate cite`: the receipts and the witness files beside them, then the batch, read in
/// passes by the gate (`seedledger_gate::CiteReading`): what is held is bounded by the
/// failing seeds, not by the rows.
pub(super) fn cite(args: &CiteArgs) -> anyhow::Result<ExitStatus> {
    let root = args
        .expect
        .root
        .clone()
        .unwrap_or_else(crate::common::discover_root);
    let store = crate::common::store::store_dir(&root, args.store.as_deref());
    // Who may cite, first: a trust file needs a citer key; the store's evidence and clock.
    let trust = crate::common::keys::Roles::load(&root)?;
    let signer = crate::common::keys::citer_key(&trust, args.key_file.as_deref())?;
    let stored = crate::common::store::read_store(&store, trust.keys()).map_err(|e| anyhow!(e))?;
    let now = crate::common::store::now_checked(&stored).map_err(|e| anyhow!(e))?;
    let shown: Vec<String> = stored
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    let cited = crate::common::store::cited_evidence(&stored, &shown);
    let files = with_neighbours(&args.receipts);
    let mut receipts = read_receipts(&files)?;

    // What is current for each receipt: its property's fixture pin, and the work tree's code
    // identity against the receipt's own base. Notes say how each receipt stands.
    let mut currents = Currents::new(&root);
    let current: Vec<(Option<String>, Option<String>)> = receipts
        .iter()
        .map(|r| current_of(&mut currents, r))
        .collect();
    let mut reading = CiteReading::<Scratch>::new()?;
    read_beside(&mut reading, &files, &mut receipts, &current)?;

    let x = expectation(&args.expect)?;
    let roles = x.roles.label();
    let facts = receipt_facts(&receipts, &current);
    let mut batch = Batch::open(&args.expect.witnesses)?;
    let CiteDecided {
        decision,
        lines,
        culprit,
        mut pending,
    } = reading.decide(
        &mut batch,
        x.roles.keys(),
        &x.expected,
        &facts,
        args.waive_same_seed_review,
    )?;
    x.notes(lines, &decision, culprit.map(|k| batch.path(k)));
    receipt_notes(&facts);
    // The gate's rules over what was read: two runs' rows under one id refuse; the runs with
    // rows but no receipt are named.
    let again = |k: u32| ReceiptFile::new(&files[receipts[k as usize].index]);
    if let Some(e) = reading.edited(again)? {
        bail!("{e}");
    }
    let beside = receipts
        .iter()
        .flat_map(|r| r.runs_beside.iter().map(String::as_str));
    let runs_without_receipt = pending.runs_without_receipt(&facts, beside);
    let req = CiteFacts {
        decision: &decision,
        expected: &x.expected,
        writer: Runner::from(args.runner),
        receipts: &facts,
        expires_at: args.expires_at.as_deref(),
        now,
        waive_same_seed_review: args.waive_same_seed_review,
        runs_without_receipt: &runs_without_receipt,
        spec_reviewed: x.oracle == seedledger_format::OracleSource::HumanReviewed,
        roles_authenticated: x.roles.keys().is_some(),
        cited: &cited,
    };
    // The review printed is the one the citation writer ran (the patch's rows at its code).
    let mut flake = None;
    let (outcome, review) = match reading.cite(pending, &req, &mut batch)? {
        Ok((mut citation, review)) => {
            if let Some((key, key_id)) = &signer {
                seedledger_gate::sign_citation(&mut citation, key, key_id);
            }
            flake = citation.flake.clone();
            // What the citation rests on is made durable before the citation is written.
            sync_cited(&files, &receipts, &args.expect.witnesses)?;
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
    let flake = flake.filter(|_| outcome.is_ok());
    print_cite(
        &decision,
        review.as_ref(),
        (&outcome, flake.as_ref()),
        roles,
        args.format,
    );
    Ok(match outcome {
        Ok(_) => ExitStatus::Success,
        Err(_) => ExitStatus::No,
    })
}

/// Makes the evidence a citation rests on durable before the citation is written: every
/// receipt read (the given ones and those beside them), the witness file beside each, the
/// batch's witness files, and their directories. A run writes its evidence without waiting
/// for the disk (crash safe, not power-loss safe: the runner's `durability.rs`); a citation
/// is written durably, so without this a power loss after it could keep the citation and
/// take back the evidence it cites.
fn sync_cited(
    files: &[PathBuf],
    receipts: &[ReadReceipt],
    batch: &[PathBuf],
) -> anyhow::Result<()> {
    let mut paths: Vec<PathBuf> = files.to_vec();
    paths.extend(receipts.iter().filter_map(|r| {
        let id = r.property_id.as_deref()?;
        Some(super::reading::beside(&files[r.index], id))
    }));
    paths.extend(batch.iter().cloned());
    paths.sort();
    paths.dedup();
    seedledger_format::sync_evidence(paths.iter().map(PathBuf::as_path))
        .context("the cited evidence cannot be made durable; no citation written")
}

/// Each receipt against its run's rows (`seedledger_gate::CiteReading::receipt`); the rows
/// of the current ones' runs are the only local rows that may be cited.
fn read_beside(
    reading: &mut CiteReading<Scratch>,
    files: &[PathBuf],
    receipts: &mut [ReadReceipt],
    current: &[(Option<String>, Option<String>)],
) -> anyhow::Result<()> {
    for (index, (r, now)) in receipts.iter_mut().zip(current).enumerate() {
        let citable = retired_against(r, now).is_none();
        let mut source = ReceiptFile::new(&files[r.index]);
        let beside = reading.receipt(index as u32, citable, &mut source)?;
        r.disagreement = beside.disagreement;
        r.failing_seeds = beside.failing_seeds;
        r.runs_beside = beside.runs_beside;
        r.part_runs = beside.part_runs;
    }
    Ok(())
}

/// The receipts as the citation's checks read them, with what is current for each.
fn receipt_facts<'a>(
    receipts: &'a [ReadReceipt],
    current: &'a [(Option<String>, Option<String>)],
) -> Vec<ReceiptFacts<'a>> {
    receipts
        .iter()
        .zip(current)
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
        .collect()
}

/// The note on stderr for each receipt: its status, retirement and cross-check.
fn receipt_notes(facts: &[ReceiptFacts<'_>]) {
    for f in facts {
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
}

/// The receipts given, and every other `*.receipt.json` in their directories (an evidence
/// directory holds one patch's receipts: a citation never trusts the caller to list them all;
/// leaving out an open one does not make it go away). The ones found are named on stderr.
pub(super) fn with_neighbours(given: &[PathBuf]) -> Vec<PathBuf> {
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
/// [`read_beside`].)
pub(super) fn read_receipts(files: &[PathBuf]) -> anyhow::Result<Vec<ReadReceipt>> {
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
pub(super) fn current_of(
    currents: &mut Currents,
    r: &ReadReceipt,
) -> (Option<String>, Option<String>) {
    let pin = r
        .property_id
        .as_deref()
        .and_then(|p| currents.spec(p))
        .map(|(_, pin)| pin);
    (pin, currents.code(r.code_base.as_deref()))
}

/// The retirement of a receipt against the work tree (see `seedledger_gate::receipt_retirement`).
pub(super) fn retirement(currents: &mut Currents, r: &ReadReceipt) -> Option<Retirement> {
    retired_against(r, &current_of(currents, r))
}

/// The retirement of a receipt against what is current for it (`current_of`'s pin and code).
fn retired_against(
    r: &ReadReceipt,
    (pin, code): &(Option<String>, Option<String>),
) -> Option<Retirement> {
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
pub(super) fn write_citation(
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
    let stored = crate::common::store::read_store(store, keys).map_err(|e| anyhow!(e))?;
    let shown: Vec<String> = stored
        .iter()
        .map(|s| s.path.display().to_string())
        .collect();
    let cited = crate::common::store::cited_evidence(&stored, &shown);
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

/// What `gate cite` did: the citation written (and the flake rate it records), or why not.
type Written<'a> = (
    &'a Result<String, CiteError>,
    Option<&'a seedledger_format::CitationFlake>,
);

pub(super) fn print_cite(
    d: &FreezeDecision,
    review: Option<&Review>,
    (outcome, flake): Written<'_>,
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
            if let Some(flake) = flake {
                out_line(&format!(
                    "flake rate of seed {}: {} (frozen as {})",
                    flake.seed,
                    flake.summary(),
                    flake.class
                ));
            }
            match outcome {
                Ok(path) => out_line(&format!("citation written: {path}")),
                Err(e) => out_line(&format!("citation refused: {e}")),
            }
        }
        Format::Json => json::print(&CiteLine {
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
            flake,
            roles,
        }),
    }
}

pub(super) fn print_decision(d: &FreezeDecision, review: &Review, roles: &str, format: Format) {
    match format {
        Format::Human => {
            out_line(&d.reason);
            if let (Some(fail_id), Some(pass_id)) = (&d.fail_id, &d.pass_id) {
                out_line(&format!("fail_id: {fail_id}"));
                out_line(&format!("pass_id: {pass_id}"));
            }
            out_line(&review.summary());
        }
        Format::Json => json::print(&DecisionLine {
            admit: d.admit,
            reason: &d.reason,
            fail_id: d.fail_id.as_deref(),
            pass_id: d.pass_id.as_deref(),
            same_seed_review: ReviewJson::of(review),
            roles,
        }),
    }
}
