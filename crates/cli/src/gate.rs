//! `cargo xtask gate ...`: close receipts, count them per patch, decide freezes, write
//! citations, print pins and digests. Thin: reads files, computes the expected digest and pin
//! from the checked-in spec and fixture files, reads the clock for a citation's `written_at`
//! (the gate crate reads none), calls `seedledger-gate`, prints, and maps outcomes to exit
//! codes (0 yes, 1 no, 2 error).

mod cite;
mod close;
mod decide;
mod flake;
mod freezes;
mod json;
pub mod keys;
mod merge;
mod reading;
mod store_diff;

use crate::common::Role;
use crate::common::store::Currents;
use crate::common::{Format, MAX_FIXTURE_BYTES, MAX_RECEIPT_BYTES, MAX_SPEC_BYTES, read_bounded};
use anyhow::{Context, anyhow, bail};
use cite::{cite, print_decision, retirement};
use clap::{Args, Subcommand};
use close::{close, counts};
use decide::{decide, expectation};
use freezes::freezes;
use json::{CiteLine, CloseLine, CountsLine, DecisionLine, FreezeLine, ReviewJson};
use seedledger_format::{
    Citation, ExitStatus, Runner, SpecFile, fixture_pin, parse_rfc3339, property_digest,
    write_atomic_new,
};
use seedledger_gate::{
    CiteError, CiteFacts, CloseStatus, Closing, Current, Expected, FreezeDecision, ReceiptFacts,
    Retirement, Review, close_ledger_bytes, patch_counts, receipt_retirement,
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
    ///      citation records `same_seed_review: waived`. A runner's consistency on the seed
    ///      leaves its remote replay rows (`attempt`) aside: their disagreement is the flake
    ///      rate;
    ///   9. the flake rate (SPEC: Flake rate): the replay rows of the cited fail row's seed
    ///      (of the patch at its code; with a trust file, the remote role's only) are counted
    ///      per role; a seed whose every replay fails (at least 20 on each role that replayed
    ///      it) is refused with `the failing seed fails on every replay: a bug, not a flake`,
    ///      and with the review waived so is any such seed in scope.
    ///
    /// The citation (schema 3) names the patch, property, digest, pin, bound, the frozen
    /// failure signature, fail_id and pass_id (the same-seed pair) and their seed, the review,
    /// the code identity and its base, the cited seed's flake rate (`flake`: class, and each
    /// role's replays, fails and exact 95% interval), expires_at (written in UTC) and
    /// written_at. It is
    /// written atomically into `--store` (default ROOT/props/freezes) under a new name
    /// `<property>.<written_at>.<8 hex>.json`, never over an existing file: a citation is
    /// never refreshed or extended; `prop run` honours it while it is active (`gate freezes`).
    ///
    /// Output. Human: the decision reason, verbatim, on the first line; on admit `fail_id:`
    /// and `pass_id:` lines (the decision's); then the review the writer ran
    /// (`same-seed review: passed: ...`, `... waived: ...`, a refusal, or `not reached` when
    /// an earlier check refused); on a written citation `flake rate of seed N: <class>: ...
    /// (frozen as <class>)`; then `citation written: <file>` or
    /// `citation refused: <why>`. Notes on stderr name the expected values, every receipt's
    /// status, retirement and cross-check, and whether runner roles are authenticated. JSON
    /// (`--format json`): the last stdout line is
    /// `{"written": <bool>, "reason": "<decision reason>", "refusal": <why or null>,
    ///   "review_reason": <review refusal or null>, "citation": <file or null>,
    ///   "fail_id": <id or null>, "pass_id": <id or null>,
    ///   "same_seed_review": {"passed", "reason", "fail_id", "pass_id", "seed"} or null,
    ///   "flake": {"class", "seed", "runners"} or null,
    ///   "roles": "authenticated" | "unauthenticated"}`.
    ///
    /// Exit status: 0 the citation was written; 1 refused (a remote writer, no expiry, the
    /// decision refused, a receipt that disagrees with its rows, an open receipt, no current
    /// eligible receipt, no code identity, the same-seed review, a seed failing on every
    /// replay, evidence already cited); 2 error (an expiry that is
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
    Merge(merge::MergeArgs),

    /// Replays of failing seeds: per failure signature and seed, each runner role's replays,
    /// fails, rate, exact 95% interval, and the class (SPEC: Flake rate). Writes nothing.
    ///
    /// Input: witness files, or directories searched recursively for `*.witness.jsonl` and
    /// `*.receipt.json` (the CI artifacts of several pushes, say); a file's receipts are the
    /// `*.receipt.json` beside it. A replay row is a row with `attempt` (written by
    /// `cargo xtask prop reproduce --property ID --seed N --repeat K`). Rows are keyed by
    /// property, rng scheme (a seed means another input under another scheme), seed and
    /// failure signature S: the signatures of a seed are those of its fail rows (a run's or a
    /// replay's) and the `replayed_signature` of its replay rows. For each S and role:
    /// replays = the seed's replay rows on that role, whatever their verdict; fails = those
    /// that failed with S (a fail with another signature is not one). Only seeds with replay
    /// rows get a line; all inputs are summed, whatever code identity they ran (give one
    /// code's artifacts, or --patch-id, to class a seed at one code). No row is kept: replay
    /// rows are counted in one pass, which also notes the seed, signature and run of up to
    /// 2^18 of the runs' fail rows; past that, those on replayed seeds are read in a second.
    ///
    /// Classes, first match wins: flaky (a role saw a replay fail with S and one not),
    /// insufficient (a role that replayed the seed has fewer than 20 replays), deterministic
    /// (every replay on every role fails with S), environment-dependent (every replay on one
    /// role fails with S, none on another), not reproduced (no replay fails with S).
    ///
    /// First and last seen: the earliest and latest `started_at` among the receipts of the
    /// runs (rows carry `run_id`) whose rows showed S failing on the seed — the runs' own
    /// trials and, when their runs have receipts among the inputs, replays. A row whose run
    /// has no receipt among the inputs is counted but dates nothing (a note says how many).
    ///
    /// Runner roles: where ROOT/props/trusted-runners.jsonl exists, a remote row without a
    /// valid signature by a declared remote key does not count (stderr says how many and
    /// why), as in `gate decide`.
    ///
    /// Output. Human, per line: `<property> `<S>` seed <N>: <class> (first seen <t>, last
    /// seen <t>)`, then one line per role that replayed the seed:
    ///   local: 20 replays, 5 fails, rate 25.0%, 95% CI [8.7%, 49.1%]
    ///   remote: 20 replays, 0 fails, rate 0.0%, 95% CI [0.0%, 16.8%], < 13.9% (one-sided 95%)
    /// and, when insufficient, `needs K more replays on <role>: cargo xtask prop reproduce
    /// --property ID --seed N --repeat K`. JSON (`--format json`), one object per line:
    ///   {"property", "signature", "seed", "class", "runners": {"local": {"replays", "fails",
    ///    "rate", "interval": [lo, hi], "upper_bound" (0 fails only)}, "remote": {...}},
    ///    "rng", "first_seen", "last_seen", "replays_needed" (insufficient only)}
    /// (a role that did not replay the seed is absent). Markdown (`--format markdown`): one
    /// table, as `ci gate` puts in the step summary. Notes on stderr: malformed lines (file
    /// and line; skipped), rows left out, seeds with replays but no signature.
    ///
    /// Exit status: 0 the evidence was read (whatever the classes); 2 a path, witness file,
    /// receipt or trust file cannot be read, or a receipt is not JSON (named; every other
    /// input is still read and printed).
    #[command(verbatim_doc_comment)]
    Flake(flake::FlakeArgs),

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
        GateCommand::Flake(args) => flake::flake(&args),
        GateCommand::Merge(args) => merge::merge(&args),
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
/// decision field — is read whole, so its error or `incomplete_fields` detail is the same
/// word for word as a whole read's (and so is a receipt that cannot be opened or read).
fn read_receipt(file: &Path) -> Result<ReadReceipt, String> {
    let shown = file.display().to_string();
    if let Some(read) = reading::scan_receipt(file) {
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
