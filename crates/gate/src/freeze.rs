//! Freezes after they are written (SPEC: Freeze store and honoured freezes; Per-patch counts
//! and retirement): whether a citation is still honoured, whether a receipt still counts as
//! evidence, and how a run's failures read against the active citations of its property.
//!
//! The caller computes what is current — the spec's digest, the fixture's pin, the work
//! tree's code identity against the citation's or receipt's own base — and the time; these
//! functions only compare.

use seedledger_format::{Citation, FailureMode};
use std::fmt;

/// What changed under a citation or a receipt, retiring it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Retirement {
    /// The spec file's digest is not the recorded one.
    SpecChanged,
    /// The fixture's pin is not the recorded one.
    FixtureChanged,
    /// The code identity (diff against the recorded base, or `HEAD`) is not the recorded one,
    /// or cannot be computed any more.
    DiffChanged,
}

impl Retirement {
    /// How `gate freezes` prints it: `retired (spec changed)`, ...
    pub fn as_str(self) -> &'static str {
        match self {
            Retirement::SpecChanged => "retired (spec changed)",
            Retirement::FixtureChanged => "retired (fixture changed)",
            Retirement::DiffChanged => "retired (diff changed)",
        }
    }
}

impl fmt::Display for Retirement {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A citation's state. Only `Active` is honoured.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum CitationState {
    /// Honoured: not retired, not expired.
    Active,
    /// Its `expires_at` has passed.
    Expired,
    /// What it was cited against changed.
    Retired(Retirement),
}

impl CitationState {
    /// Every state string, as `gate freezes` prints them.
    pub const ALL: [CitationState; 5] = [
        CitationState::Active,
        CitationState::Expired,
        CitationState::Retired(Retirement::SpecChanged),
        CitationState::Retired(Retirement::FixtureChanged),
        CitationState::Retired(Retirement::DiffChanged),
    ];

    /// How `gate freezes` prints it: `active`, `expired`, `retired (...)`.
    pub fn as_str(self) -> &'static str {
        match self {
            CitationState::Active => "active",
            CitationState::Expired => "expired",
            CitationState::Retired(r) => r.as_str(),
        }
    }

    /// Honoured.
    pub fn is_active(self) -> bool {
        self == CitationState::Active
    }
}

impl fmt::Display for CitationState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// What is current where a citation or receipt is read. `None` means it could not be
/// computed (a missing spec or fixture, git failing): never a match.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Current<'a> {
    /// The spec's digest (64 hex).
    pub digest: Option<&'a str>,
    /// The fixture's pin (64 hex).
    pub pin: Option<&'a str>,
    /// The code identity, computed the way the evidence recorded it (same base).
    pub code: Option<&'a str>,
}

/// The state of `citation` at `now` (seconds since the Unix epoch) against what is current.
/// Checked in this order, first match wins: spec changed, fixture changed, diff changed,
/// expired (`now` at or past `expires_at`, or an unreadable expiry), else active.
pub fn citation_state(citation: &Citation, now: i64, current: &Current<'_>) -> CitationState {
    if current.digest != Some(citation.property_digest.as_str()) {
        return CitationState::Retired(Retirement::SpecChanged);
    }
    if current.pin != Some(citation.fixture_pin.as_str()) {
        return CitationState::Retired(Retirement::FixtureChanged);
    }
    if current.code != Some(citation.code.as_str()) {
        return CitationState::Retired(Retirement::DiffChanged);
    }
    match citation.expires_at_unix() {
        Some(expires) if now < expires => CitationState::Active,
        _ => CitationState::Expired,
    }
}

/// Whether a receipt still counts as evidence: it retires when the fixture hash or the code
/// identity it recorded no longer matches the work tree (SPEC: a receipt retires when the
/// patch's diff or the fixture hash changes). Only a *known* difference retires: when what
/// is current cannot be computed (`None`), the receipt is not retired — an open receipt then
/// still disables the freeze path (failing closed), and backing a citation needs a positive
/// match anyway. A receipt that recorded no code identity is judged by its fixture hash; one
/// with no fixture hash (a half-written or tampered receipt) never retires.
/// `fixture_hash` is the receipt's (`sha256:<pin>`), `current.pin` the bare pin.
pub fn receipt_retirement(
    fixture_hash: Option<&str>,
    code: Option<&str>,
    current: &Current<'_>,
) -> Option<Retirement> {
    if let (Some(pin), Some(hash)) = (current.pin, fixture_hash)
        && hash != seedledger_format::fixture_hash_from_pin(pin)
    {
        return Some(Retirement::FixtureChanged);
    }
    match (code, current.code) {
        (Some(code), Some(now)) if code != now => Some(Retirement::DiffChanged),
        _ => None,
    }
}

/// How a run reads against its property's active citations.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Honour<'a> {
    /// Nothing failed. `citation`: an active citation the property no longer needs (the
    /// freeze can be removed).
    Pass {
        /// An active citation the property no longer needs.
        citation: Option<&'a Citation>,
    },
    /// Every failure mode of the run is frozen by an active citation: reported, not failed.
    Frozen {
        /// The citations that freeze the run's failure modes.
        citations: Vec<&'a Citation>,
    },
    /// At least one failure mode is not frozen: the run fails as usual. `frozen` lists the
    /// modes an active citation does cover.
    Fail {
        /// The modes no active citation covers.
        unfrozen: Vec<&'a FailureMode>,
        /// The modes an active citation covers, with it.
        frozen: Vec<(&'a FailureMode, &'a Citation)>,
    },
}

/// Reads a run's failure modes (every distinct signature) against the active citations of
/// its property. A citation freezes exactly one failure mode, its `signature`; a failure
/// with any other signature fails the run. When several active citations freeze one mode,
/// the one that expires last is named.
pub fn honour<'a>(modes: &'a [FailureMode], active: &[&'a Citation]) -> Honour<'a> {
    let citing = |signature: &str| {
        active
            .iter()
            .copied()
            .filter(|c| c.signature == signature)
            .max_by_key(|c| c.expires_at_unix())
    };
    if modes.is_empty() {
        return Honour::Pass {
            citation: active.iter().copied().max_by_key(|c| c.expires_at_unix()),
        };
    }
    let mut frozen = Vec::new();
    let mut unfrozen = Vec::new();
    for mode in modes {
        match citing(&mode.signature) {
            Some(c) => frozen.push((mode, c)),
            None => unfrozen.push(mode),
        }
    }
    if unfrozen.is_empty() {
        let mut citations: Vec<&Citation> = Vec::new();
        for (_, c) in &frozen {
            if !citations.iter().any(|seen| std::ptr::eq(*seen, *c)) {
                citations.push(c);
            }
        }
        Honour::Frozen { citations }
    } else {
        Honour::Fail { unfrozen, frozen }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedledger_format::{CITATION_SCHEMA_VERSION, SameSeedReview};

    const NOW: i64 = 1_900_000_000; // 2030-03-17
    const DIGEST: &str = "1111111111111111111111111111111111111111111111111111111111111111";
    const PIN: &str = "2222222222222222222222222222222222222222222222222222222222222222";

    fn citation(signature: &str, expires_at: &str) -> Citation {
        Citation {
            schema_version: CITATION_SCHEMA_VERSION,
            patch_id: "pr-7".into(),
            property_id: "p".into(),
            property_digest: DIGEST.into(),
            fixture_pin: PIN.into(),
            bound: "b".into(),
            signature: signature.into(),
            fail_id: "f".into(),
            pass_id: "p".into(),
            seed: Some(3),
            same_seed_review: SameSeedReview::Passed,
            code: "diff:x".into(),
            code_base: Some("base".into()),
            expires_at: expires_at.into(),
            written_at: "2026-12-01T00:00:00Z".into(),
            flake: Some(seedledger_format::CitationFlake::of(
                3,
                seedledger_format::flake::Tally {
                    replays: 20,
                    fails: 5,
                },
                seedledger_format::flake::Tally::default(),
            )),
            key_id: None,
            sig: None,
        }
    }

    fn current() -> Current<'static> {
        Current {
            digest: Some(DIGEST),
            pin: Some(PIN),
            code: Some("diff:x"),
        }
    }

    #[test]
    fn every_state_is_reached_and_named() {
        let c = citation("assert:a", "2031-01-01T00:00:00Z");
        let cases = [
            (current(), NOW, "active"),
            (current(), 1_924_992_000, "expired"), // exactly 2031-01-01T00:00:00Z
            (current(), 2_000_000_000, "expired"),
            (
                Current {
                    digest: Some(PIN),
                    ..current()
                },
                NOW,
                "retired (spec changed)",
            ),
            (
                Current {
                    digest: None,
                    ..current()
                },
                NOW,
                "retired (spec changed)",
            ),
            (
                Current {
                    pin: Some(DIGEST),
                    ..current()
                },
                NOW,
                "retired (fixture changed)",
            ),
            (
                Current {
                    pin: None,
                    ..current()
                },
                NOW,
                "retired (fixture changed)",
            ),
            (
                Current {
                    code: Some("diff:y"),
                    ..current()
                },
                NOW,
                "retired (diff changed)",
            ),
            (
                Current {
                    code: None,
                    ..current()
                },
                NOW,
                "retired (diff changed)",
            ),
            // Retirement is reported before expiry: what changed says more than the date.
            (
                Current {
                    code: None,
                    ..current()
                },
                2_000_000_000,
                "retired (diff changed)",
            ),
        ];
        for (cur, now, want) in cases {
            assert_eq!(
                citation_state(&c, now, &cur).as_str(),
                want,
                "{cur:?} {now}"
            );
        }
        let names: Vec<&str> = CitationState::ALL.iter().map(|s| s.as_str()).collect();
        assert_eq!(
            names,
            [
                "active",
                "expired",
                "retired (spec changed)",
                "retired (fixture changed)",
                "retired (diff changed)"
            ]
        );
    }

    #[test]
    fn receipts_retire_on_fixture_or_code() {
        let hash = format!("sha256:{PIN}");
        let cur = current();
        assert_eq!(receipt_retirement(Some(&hash), Some("diff:x"), &cur), None);
        assert_eq!(receipt_retirement(Some(&hash), None, &cur), None);
        assert_eq!(
            receipt_retirement(Some(&hash), Some("diff:y"), &cur),
            Some(Retirement::DiffChanged)
        );
        assert_eq!(
            receipt_retirement(Some(&format!("sha256:{DIGEST}")), Some("diff:x"), &cur),
            Some(Retirement::FixtureChanged)
        );
        // No fixture hash (a tampered or half-written receipt): it does not retire, so an
        // open one keeps the freeze path disabled.
        assert_eq!(receipt_retirement(None, Some("diff:x"), &cur), None);
        // What cannot be computed retires nothing (an open receipt keeps blocking).
        assert_eq!(
            receipt_retirement(Some(&hash), Some("diff:x"), &Current { code: None, ..cur }),
            None
        );
        assert_eq!(
            receipt_retirement(Some("sha256:0"), Some("diff:y"), &Current::default()),
            None
        );
    }

    fn mode(signature: &str) -> FailureMode {
        FailureMode {
            signature: signature.into(),
            count: 2,
            first_seed: 7,
            replay: None,
            shrink: None,
        }
    }

    #[test]
    fn a_freeze_covers_one_failure_mode_never_the_property() {
        let a = citation("assert:a", "2031-01-01T00:00:00Z");
        let a_later = citation("assert:a", "2032-01-01T00:00:00Z");
        let b = citation("assert:b", "2031-01-01T00:00:00Z");
        let only_a = [mode("assert:a")];
        let a_and_c = [mode("assert:a"), mode("assert:c")];
        let a_and_b = [mode("assert:a"), mode("assert:b")];

        assert_eq!(honour(&[], &[]), Honour::Pass { citation: None });
        assert_eq!(honour(&[], &[&a]), Honour::Pass { citation: Some(&a) });
        assert_eq!(
            honour(&only_a, &[&a]),
            Honour::Frozen {
                citations: vec![&a]
            }
        );
        // The citation that expires last is named.
        assert_eq!(
            honour(&only_a, &[&a, &a_later]),
            Honour::Frozen {
                citations: vec![&a_later]
            }
        );
        assert_eq!(
            honour(&only_a, &[&b]),
            Honour::Fail {
                unfrozen: vec![&only_a[0]],
                frozen: vec![]
            }
        );
        assert_eq!(
            honour(&a_and_c, &[&a, &b]),
            Honour::Fail {
                unfrozen: vec![&a_and_c[1]],
                frozen: vec![(&a_and_c[0], &a)]
            }
        );
        assert_eq!(
            honour(&a_and_b, &[&a, &b]),
            Honour::Frozen {
                citations: vec![&a, &b]
            }
        );
        assert_eq!(
            honour(&only_a, &[]),
            Honour::Fail {
                unfrozen: vec![&only_a[0]],
                frozen: vec![]
            }
        );
    }
}
