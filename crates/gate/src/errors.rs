//! Error types of the gate. The decision functions themselves never fail: a bad receipt is a
//! status and a bad witness row is a reason. What remains is input that is not JSON at all
//! and a citation the writer must refuse.

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

/// Why the citation writer refuses to build a citation (SPEC: Citation).
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
    /// Freeze creation is disabled while the patch has an open receipt.
    #[error("patch `{patch_id}` has {open} open receipt(s); freeze creation is disabled")]
    OpenReceipts { patch_id: String, open: usize },
    /// The patch has no closed receipt that is `freeze_eligible` for this property.
    #[error("patch `{patch_id}` has no freeze_eligible receipt for property `{property_id}`")]
    NoEligibleReceipt {
        patch_id: String,
        property_id: String,
    },
    /// A required text field of the request is empty.
    #[error("field `{0}` is empty")]
    Empty(&'static str),
}
