//! The freeze store's own rules (SPEC: Who may cite): which stored citation may be honoured at
//! all — signed by a `citer` key of the trust file, its file name matching its text — how the
//! local gate signs one, that one piece of evidence backs at most one citation, and which
//! clocks may judge expiry. Pure: the caller reads the files, the keys and the clock.

use ed25519_dalek::Signer as _;
use seedledger_format::{
    Citation, KeyRole, RunnerKey, TrustedKeys, canonical_bytes_without_sig, check_id,
    format_rfc3339, signature_from_hex, signature_to_hex,
};
use std::fmt;

/// How a citation that may be honoured stands: signed by a declared `citer` key, or read where
/// no trust file declares who may cite.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Authenticity {
    /// Its `sig` verifies under the trust file's `citer` key `key_id`.
    Signed {
        /// The trust file's id of the key.
        key_id: String,
    },
    /// No trust file: honoured as read, and every view says so.
    Unauthenticated,
}

impl Authenticity {
    /// `signed by citer key `k`` or `unauthenticated citation`, as every view prints it.
    pub fn label(&self) -> String {
        match self {
            Authenticity::Signed { key_id } => format!("signed by citer key `{key_id}`"),
            Authenticity::Unauthenticated => UNAUTHENTICATED.to_string(),
        }
    }
}

/// What every view says of a citation read without a trust file (SPEC: Who may cite).
pub const UNAUTHENTICATED: &str = "unauthenticated citation";

/// Reads a stored citation: `text` is the file's whole text, `file_name` its name in the
/// store, `keys` the repository's trust file when it has one. `Err` is why the citation is
/// `invalid` and never honoured (a lowercase fragment): not a citation, a property id outside
/// the id rule, and — with a trust file — a name that does not match the text, no `sig`, a
/// key that is not declared for `citer`, or a signature that does not verify over the text's
/// canonical bytes.
pub fn authenticate_citation(
    text: &str,
    file_name: &str,
    keys: Option<&TrustedKeys>,
) -> Result<(Citation, Authenticity), String> {
    let citation = Citation::parse(text).map_err(|e| e.to_string())?;
    check_id("property id", &citation.property_id)
        .map_err(|e| format!("field `property_id`: {e}"))?;
    let Some(keys) = keys else {
        return Ok((citation, Authenticity::Unauthenticated));
    };
    let named = citation.file_name(text);
    if named != file_name {
        return Err(format!(
            "its file name does not match its content (a file `gate cite` wrote with this text is named `{named}`): it was edited or renamed after it was written"
        ));
    }
    let (Some(key_id), Some(sig)) = (citation.key_id.as_deref(), citation.sig.as_deref()) else {
        return Err(
            "unsigned: the trust file declares who may cite, and only a citation signed by a `citer` key is honoured"
                .to_string(),
        );
    };
    let Some(key) = keys.with_role(KeyRole::Citer).find(|k| k.key_id == key_id) else {
        return Err(match keys.keys().iter().find(|k| k.key_id == key_id) {
            Some(k) => format!(
                "signed by key `{key_id}`, which the trust file declares for the `{}` role (line {}), not for `citer`",
                k.role, k.line
            ),
            None => format!("signed by key `{key_id}`, which the trust file does not declare"),
        });
    };
    let sig = signature_from_hex(sig)?;
    let canonical = canonical_bytes_without_sig(text)
        .map_err(|e| format!("the citation has no canonical bytes to verify: {e}"))?;
    if key.public_key.verify_strict(&canonical, &sig).is_err() {
        return Err(format!(
            "its signature does not verify under citer key `{key_id}` (line {} of the trust file): it was changed after it was signed",
            key.line
        ));
    }
    let key_id = key_id.to_string();
    Ok((citation, Authenticity::Signed { key_id }))
}

/// Signs `citation` with `key` as the trust file's key `key_id`: records `key_id`, then `sig`
/// over the canonical bytes (which include `key_id`).
pub fn sign_citation(citation: &mut Citation, key: &RunnerKey, key_id: &str) {
    citation.key_id = Some(key_id.to_string());
    citation.sig = None;
    let sig = key.signing_key().sign(&citation.canonical_bytes());
    citation.sig = Some(signature_to_hex(&sig));
}

/// The evidence a stored citation names, as `gate cite` checks new evidence against it: any
/// file of the store, in any state (active, expired, retired, invalid), whose text names a
/// `fail_id` or a `pass_id`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CitedEvidence<'a> {
    /// The file, as shown to people.
    pub file: &'a str,
    /// The `fail_id` its text names.
    pub fail_id: Option<&'a str>,
    /// The `pass_id` its text names.
    pub pass_id: Option<&'a str>,
}

/// The first stored citation naming `fail_id` or `pass_id` (in either role), with the id it
/// names: one piece of evidence backs at most one citation.
pub fn already_cited<'a>(
    cited: &[CitedEvidence<'a>],
    fail_id: &str,
    pass_id: &str,
) -> Option<(&'a str, String)> {
    cited.iter().find_map(|c| {
        [c.fail_id, c.pass_id]
            .into_iter()
            .flatten()
            .find(|id| *id == fail_id || *id == pass_id)
            .map(|id| (c.file, id.to_string()))
    })
}

/// A clock that cannot judge expiry.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ClockError {
    /// Before 1970-01-01T00:00:00Z.
    BeforeEpoch {
        /// Now, in seconds since 1970.
        now: i64,
    },
    /// Earlier than a citation of the store was written.
    BeforeNewest {
        /// Now, in seconds since 1970.
        now: i64,
        /// When the newest citation was written.
        written_at: String,
    },
}

impl fmt::Display for ClockError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            ClockError::BeforeEpoch { now } => write!(
                f,
                "the system clock says {now} seconds since 1970 (before 1970): it cannot judge whether a citation has expired; set the clock"
            ),
            ClockError::BeforeNewest { now, written_at } => write!(
                f,
                "the system clock ({}) is earlier than a citation in the store was written ({written_at}): it cannot judge whether a citation has expired; set the clock",
                format_rfc3339(*now)
            ),
        }
    }
}

impl std::error::Error for ClockError {}

/// Whether `now` may judge expiry, given when the store's citations were written (seconds
/// since the epoch; unreadable ones left out by the caller): not before 1970, not before the
/// newest of them.
pub fn check_clock(
    now: i64,
    written: impl IntoIterator<Item = (i64, String)>,
) -> Result<(), ClockError> {
    if now < 0 {
        return Err(ClockError::BeforeEpoch { now });
    }
    match written.into_iter().max_by_key(|(at, _)| *at) {
        Some((at, written_at)) if now < at => Err(ClockError::BeforeNewest { now, written_at }),
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use seedledger_format::{CITATION_SCHEMA_VERSION, SameSeedReview, public_key_hex};

    fn citation() -> Citation {
        Citation {
            schema_version: CITATION_SCHEMA_VERSION,
            patch_id: "pr-7".into(),
            property_id: "order_total_nonneg".into(),
            property_digest: "d".repeat(64),
            fixture_pin: "e".repeat(64),
            bound: "total>=0".into(),
            signature: "assert:quote.total >= 0".into(),
            fail_id: "local-1-5".into(),
            pass_id: "remote-2-5".into(),
            seed: Some(5),
            same_seed_review: SameSeedReview::Passed,
            code: "diff:x".into(),
            code_base: None,
            expires_at: "2030-01-01T00:00:00Z".into(),
            written_at: "2026-12-01T00:00:00Z".into(),
            flake: Some(seedledger_format::CitationFlake::of(
                5,
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

    fn key(byte: u8) -> RunnerKey {
        RunnerKey::from_secret_bytes(&[byte; 32])
    }

    fn trust(lines: &[(&str, &str, &RunnerKey)]) -> TrustedKeys {
        let text: Vec<String> = lines
            .iter()
            .map(|(id, role, k)| {
                format!(
                    r#"{{"key_id":"{id}","role":"{role}","public_key":"{}"}}"#,
                    public_key_hex(&k.public_key())
                )
            })
            .collect();
        TrustedKeys::parse(&text.join("\n")).unwrap()
    }

    /// A signed citation's text and its file name, as `gate cite` writes them.
    fn signed(key: &RunnerKey, key_id: &str) -> (String, String) {
        let mut c = citation();
        sign_citation(&mut c, key, key_id);
        let text = c.to_json_pretty();
        let name = c.file_name(&text);
        (text, name)
    }

    #[test]
    fn a_signed_citation_verifies_and_every_tampering_is_named() {
        let citer = key(1);
        let keys = trust(&[
            ("citer-1", "citer", &citer),
            ("remote-1", "remote", &key(2)),
        ]);
        let (text, name) = signed(&citer, "citer-1");
        let (read, auth) = authenticate_citation(&text, &name, Some(&keys)).unwrap();
        assert_eq!(
            auth,
            Authenticity::Signed {
                key_id: "citer-1".into()
            }
        );
        assert_eq!(read.sig.as_deref().map(str::len), Some(128));
        let why =
            |text: &str, name: &str| authenticate_citation(text, name, Some(&keys)).unwrap_err();
        // Re-spaced, the text keeps its signature (canonical bytes) but not its name; renamed
        // to match, it verifies again.
        let spaced = text.replace("\n", "\n ");
        assert!(why(&spaced, &name).contains("file name does not match"));
        let (_, auth) =
            authenticate_citation(&spaced, &read.file_name(&spaced), Some(&keys)).unwrap();
        assert_eq!(auth.label(), "signed by citer key `citer-1`");
        // The expiry pushed out: the name refuses it, and renamed to match, the signature.
        let later = text.replace("2030-01-01T00:00:00Z", "2999-01-01T00:00:00Z");
        assert!(why(&later, &name).contains("file name does not match"));
        assert!(
            why(&later, &read.file_name(&later))
                .contains("does not verify under citer key `citer-1`")
        );
        // Unsigned, by hand.
        let bare = citation().to_json_pretty();
        let bare_name = citation().file_name(&bare);
        assert!(why(&bare, &bare_name).starts_with("unsigned"));
        // Signed by a remote key, or by a key nobody declared.
        let (text, name) = signed(&key(2), "remote-1");
        assert!(why(&text, &name).contains("declares for the `remote` role"));
        let (text, name) = signed(&key(3), "mallory");
        assert!(why(&text, &name).contains("does not declare"));
        // Signed by an undeclared key under a declared citer's id.
        let (text, name) = signed(&key(3), "citer-1");
        assert!(why(&text, &name).contains("does not verify"));
        // A property id outside the id rule is invalid with or without a trust file.
        let mut odd = citation();
        odd.property_id = "../x".into();
        let text = odd.to_json_pretty();
        assert!(
            authenticate_citation(&text, "x.json", None)
                .unwrap_err()
                .contains("property_id")
        );
    }

    #[test]
    fn without_a_trust_file_a_citation_is_unauthenticated_whatever_its_name() {
        let text = citation().to_json_pretty();
        let (_, auth) = authenticate_citation(&text, "any.json", None).unwrap();
        assert_eq!(auth, Authenticity::Unauthenticated);
        assert_eq!(auth.label(), "unauthenticated citation");
    }

    #[test]
    fn one_piece_of_evidence_backs_one_citation() {
        let cited = [
            CitedEvidence {
                file: "a.json",
                fail_id: Some("f1"),
                pass_id: Some("p1"),
            },
            CitedEvidence {
                file: "b.json",
                fail_id: None,
                pass_id: Some("p2"),
            },
        ];
        assert_eq!(already_cited(&cited, "f9", "p9"), None);
        assert_eq!(
            already_cited(&cited, "f1", "p9"),
            Some(("a.json", "f1".to_string()))
        );
        assert_eq!(
            already_cited(&cited, "f9", "p2"),
            Some(("b.json", "p2".to_string()))
        );
        // An id in the other role counts too.
        assert_eq!(
            already_cited(&cited, "p1", "f9"),
            Some(("a.json", "p1".to_string()))
        );
    }

    #[test]
    fn a_clock_before_1970_or_before_the_newest_citation_cannot_judge_expiry() {
        let written = || vec![(100, "a".to_string()), (200, "b".to_string())];
        assert_eq!(check_clock(200, written()), Ok(()));
        assert_eq!(check_clock(0, Vec::new()), Ok(()));
        assert_eq!(
            check_clock(199, written()),
            Err(ClockError::BeforeNewest {
                now: 199,
                written_at: "b".into()
            })
        );
        assert_eq!(
            check_clock(-1, Vec::new()),
            Err(ClockError::BeforeEpoch { now: -1 })
        );
    }
}
