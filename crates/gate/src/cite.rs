//! The citation writer's checks (SPEC: Citation): a citation is built only by the local
//! caller, only after an admit, only with an expiry from policy, and never while the patch
//! has an open receipt. Building the value is pure; writing the file is the caller's job
//! (`seedledger_format::write_atomic`).

use crate::close::CloseStatus;
use crate::decide::{Expected, FreezeDecision};
use crate::errors::CiteError;
use seedledger_format::{CITATION_SCHEMA_VERSION, Citation, Runner};

/// Everything [`cite`] needs. The caller supplies the clock (`written_at`) and the policy
/// (`expires_at`); the gate reads neither.
#[derive(Debug, Clone)]
pub struct CiteRequest<'a> {
    /// The outcome of `decide_freeze` over the batch, for `expected`.
    pub decision: &'a FreezeDecision,
    /// The expected values the decision was computed against.
    pub expected: &'a Expected,
    pub patch_id: &'a str,
    /// Who is asking to write. Only [`Runner::Local`] may.
    pub writer: Runner,
    /// `(property_id, status)` of every receipt stored for the patch.
    pub receipts: &'a [(&'a str, CloseStatus)],
    /// RFC 3339 UTC expiry taken from policy; `None` or empty is refused.
    pub expires_at: Option<&'a str>,
    /// RFC 3339 UTC time of writing.
    pub written_at: &'a str,
}

/// Builds the citation for an admitted freeze, or says why not. Checks, in order: the
/// writer is local; an expiry is given; the decision admitted; the patch has no open
/// receipt; the patch has a `freeze_eligible` receipt for the property.
pub fn cite(req: &CiteRequest<'_>) -> Result<Citation, CiteError> {
    if req.writer != Runner::Local {
        return Err(CiteError::NotLocal);
    }
    let expires_at = match req.expires_at {
        Some(e) if !e.trim().is_empty() => e,
        _ => return Err(CiteError::NoExpiry),
    };
    if req.patch_id.is_empty() {
        return Err(CiteError::Empty("patch_id"));
    }
    if req.written_at.trim().is_empty() {
        return Err(CiteError::Empty("written_at"));
    }
    let d = req.decision;
    let (true, Some(fail_id), Some(pass_id)) = (d.admit, &d.fail_id, &d.pass_id) else {
        return Err(CiteError::NotAdmitted(d.reason.clone()));
    };
    let open = req.receipts.iter().filter(|(_, s)| s.is_open()).count();
    if open > 0 {
        return Err(CiteError::OpenReceipts {
            patch_id: req.patch_id.to_string(),
            open,
        });
    }
    let property_id = &req.expected.property_id;
    if !req
        .receipts
        .iter()
        .any(|(p, s)| p == property_id && s.is_freeze_eligible())
    {
        return Err(CiteError::NoEligibleReceipt {
            patch_id: req.patch_id.to_string(),
            property_id: property_id.clone(),
        });
    }
    Ok(Citation {
        schema_version: CITATION_SCHEMA_VERSION,
        patch_id: req.patch_id.to_string(),
        property_id: property_id.clone(),
        property_digest: req.expected.digest.clone(),
        fixture_pin: req.expected.pin.clone(),
        bound: req.expected.bound.clone(),
        fail_id: fail_id.clone(),
        pass_id: pass_id.clone(),
        expires_at: expires_at.to_string(),
        written_at: req.written_at.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::decide::decide_freeze_rows;
    use seedledger_format::{Verdict, WitnessRow};

    fn expected() -> Expected {
        Expected {
            property_id: "order_total_nonneg".to_string(),
            digest: "d".repeat(64),
            pin: "e".repeat(64),
            bound: "total>=0".to_string(),
        }
    }

    fn row(id: &str, verdict: Verdict, signature: &str, runner: Runner) -> WitnessRow {
        let e = expected();
        WitnessRow {
            witness_id: id.to_string(),
            property_id: e.property_id,
            property_digest: e.digest,
            fixture_pin: e.pin,
            bound: e.bound,
            seed: 17,
            verdict,
            signature: signature.to_string(),
            runner,
            freeze_writer: false,
        }
    }

    fn admitted() -> FreezeDecision {
        decide_freeze_rows(
            &[
                row("w-local-1", Verdict::Fail, "AssertionError", Runner::Local),
                row("w-remote-9", Verdict::Pass, "ok", Runner::Remote),
            ],
            &expected(),
        )
    }

    /// Runs [`cite`] on a request built from the defaults and `edit`.
    fn check(
        edit: impl FnOnce(&mut CiteRequest<'_>),
        decision: &FreezeDecision,
        receipts: &[(&str, CloseStatus)],
    ) -> Result<Citation, CiteError> {
        let expected = expected();
        let mut req = CiteRequest {
            decision,
            expected: &expected,
            patch_id: "agent-1842",
            writer: Runner::Local,
            receipts,
            expires_at: Some("2030-01-01T00:00:00Z"),
            written_at: "2029-12-01T00:00:00Z",
        };
        edit(&mut req);
        cite(&req)
    }

    const ELIGIBLE: &[(&str, CloseStatus)] = &[
        ("order_total_nonneg", CloseStatus::FreezeEligible),
        ("other", CloseStatus::BudgetPassNoFreeze),
    ];

    #[test]
    fn admitted_local_with_expiry_is_cited() {
        let c = check(|_| {}, &admitted(), ELIGIBLE).unwrap();
        assert_eq!(
            (c.fail_id.as_str(), c.pass_id.as_str()),
            ("w-local-1", "w-remote-9")
        );
        assert_eq!(c.expires_at, "2030-01-01T00:00:00Z");
        assert_eq!(c.fixture_pin, "e".repeat(64));
        assert_eq!(c.schema_version, CITATION_SCHEMA_VERSION);
    }

    #[test]
    fn refusals() {
        let d = admitted();
        assert_eq!(
            check(|r| r.writer = Runner::Remote, &d, ELIGIBLE),
            Err(CiteError::NotLocal)
        );
        assert_eq!(
            check(|r| r.expires_at = None, &d, ELIGIBLE),
            Err(CiteError::NoExpiry)
        );
        assert_eq!(
            check(|r| r.expires_at = Some(" "), &d, ELIGIBLE),
            Err(CiteError::NoExpiry)
        );
        let refused = decide_freeze_rows(&[], &expected());
        assert_eq!(
            check(|_| {}, &refused, ELIGIBLE),
            Err(CiteError::NotAdmitted(
                "need two witnesses on the same pin, digest, and bound".to_string()
            ))
        );
        let open = [
            ("order_total_nonneg", CloseStatus::FreezeEligible),
            ("other", CloseStatus::SeedGap),
        ];
        assert_eq!(
            check(|_| {}, &d, &open),
            Err(CiteError::OpenReceipts {
                patch_id: "agent-1842".to_string(),
                open: 1
            })
        );
        assert!(matches!(
            check(
                |_| {},
                &d,
                &[("order_total_nonneg", CloseStatus::ShrinkUnstable)]
            ),
            Err(CiteError::NoEligibleReceipt { .. })
        ));
        assert!(matches!(
            check(|_| {}, &d, &[]),
            Err(CiteError::NoEligibleReceipt { .. })
        ));
        assert_eq!(
            check(|r| r.patch_id = "", &d, ELIGIBLE),
            Err(CiteError::Empty("patch_id"))
        );
    }
}
