//! Error types of the gate. The decision functions themselves never fail: a bad receipt is a
//! status and a bad witness row is a reason. What remains is input that is not JSON at all,
//! a citation the writer must refuse, and a scratch file that failed under a reading.

/// A receipt's bytes that are not JSON at all (an input error, exit 2; SPEC: Gate decision 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not JSON: line {line}, column {column}: {message}")]
pub struct NotJsonError {
    /// 1-based line of the first offending byte.
    pub line: usize,
    /// 1-based column (in bytes) of the first offending byte; 0 at the end of the input.
    pub column: usize,
    /// What the JSON reader expected, without the position.
    pub message: String,
}

/// Why the citation writer refuses to build a citation (SPEC: Citation; Same-seed review).
/// [`CiteError::is_input_error`] tells bad input (exit 2) from a refusal (exit 1).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum CiteError {
    /// `decide_freeze` did not admit; carries its reason verbatim.
    #[error("no admit: {0}")]
    NotAdmitted(String),
    /// Only the local caller may write a citation.
    #[error("a remote runner cannot write a citation")]
    NotLocal,
    /// A citation without an expiry from policy is refused.
    #[error("a citation needs an expiry from policy")]
    NoExpiry,
    /// The expiry is not an RFC 3339 time.
    #[error("expiry `{0}` is not an RFC 3339 time; give a UTC time such as 2030-01-01T00:00:00Z")]
    BadExpiry(String),
    /// The expiry is not in the future: an expired citation is never honoured.
    #[error(
        "expiry `{expires_at}` is not in the future (now is {now}); an expired citation is not honoured"
    )]
    PastExpiry {
        /// The expiry given.
        expires_at: String,
        /// Now, in RFC 3339.
        now: String,
    },
    /// No receipt was given: a citation needs the receipts of its patch.
    #[error("no receipts given; a citation needs the receipts of its patch")]
    NoReceipts,
    /// The receipts name several patches; a citation is for one.
    #[error("the receipts belong to {} patches: {}; a citation is for one patch: pass only that patch's receipts", .0.len(), .0.join(", "))]
    SeveralPatches(Vec<String>),
    /// Freeze creation is disabled while the patch has an open receipt.
    #[error("patch `{patch_id}` has {open} open receipt(s) ({files}); freeze creation is disabled")]
    OpenReceipts {
        /// The patch.
        patch_id: String,
        /// How many receipts are open.
        open: usize,
        /// The open receipts' files, joined.
        files: String,
    },
    /// The patch has no current receipt that is `freeze_eligible` for this property.
    #[error(
        "patch `{patch_id}` has no freeze_eligible receipt for property `{property_id}` made against the current fixture and code{retired}"
    )]
    NoEligibleReceipt {
        /// The patch.
        patch_id: String,
        /// The property cited.
        property_id: String,
        /// `; N retired (...)` when retired receipts were left out, else empty.
        retired: String,
    },
    /// The eligible receipt recorded no code identity, so no row can be tied to the code.
    #[error(
        "receipt `{0}` records no code identity (was it run outside a git work tree?); a citation must name the code its evidence came from"
    )]
    NoCodeIdentity(String),
    /// The same-seed review (or the origin check) refused; carries the reason verbatim.
    #[error("{reason} ({detail})")]
    Review {
        /// The review's reason, one of SPEC's strings.
        reason: &'static str,
        /// What the review found.
        detail: String,
    },
    /// The cited seed (or, with the review waived, a replayed seed in scope) fails with the
    /// cited signature on every replay of every role that replayed it: the failure is a bug
    /// in the code, and a freeze would hide it (SPEC: Flake rate).
    #[error("{} (seed {seed}: {detail})", Self::DETERMINISTIC)]
    Deterministic {
        /// The seed.
        seed: u64,
        /// What its replays showed (`CitationFlake::summary`).
        detail: String,
    },
    /// A receipt of the patch disagrees with its own run's witness rows (hand-edited).
    #[error("receipt `{file}` disagrees with its run's witness rows: {detail}")]
    Disagrees {
        /// The receipt's file.
        file: String,
        /// The first disagreement.
        detail: String,
    },
    /// Two receipts name the same run (a run has one receipt; a copy edited to share another
    /// run's id would let one run's rows stand in for another's).
    #[error("two receipts name run `{0}`: a run has one receipt")]
    DuplicateRun(String),
    /// The spec file does not say `oracle_source: human_reviewed` now.
    #[error(
        "props/{0}.md does not say `oracle_source: human_reviewed`: a draft spec backs no citation (a person reviews it, commits it, and runs again)"
    )]
    SpecNotReviewed(String),
    /// The spec's bound still says TODO (as `prop new` left it).
    #[error(
        "props/{property_id}.md's bound still says TODO (`{bound}`): a citation freezes a failure of a stated bound; write it, have it reviewed, and run again"
    )]
    BoundTodo {
        /// The property cited.
        property_id: String,
        /// The spec's bound.
        bound: String,
    },
    /// Rows of runs whose receipts are not among the patch's receipts.
    #[error(
        "witness rows of run(s) {0} have no receipt among the patch's receipts: a run's receipt is missing or was left out (an open one?); give the evidence directory that holds them all"
    )]
    RunsWithoutReceipt(String),
    /// Two runs wrote rows under one witness id.
    #[error("two runs wrote rows named `{0}`; witness ids are unique, so the evidence was edited")]
    EditedRows(String),
    /// A stored citation already names one of the cited rows: a citation is never refreshed
    /// or extended (SPEC: Who may cite).
    #[error(
        "witness `{id}` is already cited by `{file}`: one piece of evidence backs one citation, which is never refreshed or extended; a new citation needs new evidence"
    )]
    AlreadyCited {
        /// The witness id already cited.
        id: String,
        /// The stored citation that names it.
        file: String,
    },
    /// A required text field of the request is empty.
    #[error("field `{0}` is empty")]
    Empty(&'static str),
    /// [`crate::CiteReading::cite`] was given facts that make a citation reachable while the
    /// facts given to [`crate::CiteReading::decide`] left no review to prepare: the caller
    /// gave the two stages different receipts.
    #[error("the same-seed review was not prepared; this is a bug")]
    ReviewNotPrepared,
}

/// A scratch file ([`crate::Spill`]) failed while a reading kept something there: what it
/// kept (the message), and the cause (the source).
#[derive(Debug, thiserror::Error)]
#[error("{what}")]
pub struct SpillError {
    /// What the reading was doing with the scratch file.
    pub what: &'static str,
    /// The cause.
    #[source]
    pub source: std::io::Error,
}

impl SpillError {
    /// `what` failed with `source`.
    pub(crate) fn new(what: &'static str, source: std::io::Error) -> SpillError {
        SpillError { what, source }
    }
}

impl CiteError {
    /// SPEC's reason for a seed that fails on every replay.
    pub const DETERMINISTIC: &'static str =
        "the failing seed fails on every replay: a bug, not a flake";

    /// Bad input rather than a refusal: exit status 2.
    pub fn is_input_error(&self) -> bool {
        matches!(
            self,
            CiteError::BadExpiry(_)
                | CiteError::PastExpiry { .. }
                | CiteError::NoReceipts
                | CiteError::SeveralPatches(_)
                | CiteError::Empty(_)
                | CiteError::EditedRows(_)
                | CiteError::ReviewNotPrepared
        )
    }
}
