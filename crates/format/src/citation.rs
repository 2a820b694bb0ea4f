//! Citations: the freeze file the local gate writes after an admit (SPEC: Citation).

use serde::{Deserialize, Serialize};

/// The citation schema this crate writes.
pub const CITATION_SCHEMA_VERSION: u32 = 1;

/// A freeze citation.
///
/// # Format
///
/// A JSON object: `schema_version` (1), `property_id`, `property_digest` (64 hex),
/// `fixture_pin` (64 hex), `bound`, `fail_id` and `pass_id` (the witness ids the gate
/// admitted), `expires_at` (RFC 3339 UTC, from policy; required), `written_at` (RFC 3339
/// UTC), and `patch_id`. A citation is never refreshed or extended.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Citation {
    pub schema_version: u32,
    pub patch_id: String,
    pub property_id: String,
    pub property_digest: String,
    pub fixture_pin: String,
    pub bound: String,
    pub fail_id: String,
    pub pass_id: String,
    pub expires_at: String,
    pub written_at: String,
}
