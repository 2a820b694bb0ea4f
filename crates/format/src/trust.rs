//! Trusted runner keys: the trust file a repository commits to say which ed25519 keys may
//! vouch for which runner role, and the text forms of keys and signatures (SPEC: Witness row
//! extensions, `sig`).
//!
//! # Format of the trust file (`props/trusted-runners.jsonl`)
//!
//! JSON Lines, one key per line; blank lines are ignored:
//!
//! ```text
//! {"key_id":"remote-ci","role":"remote","public_key":"3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c"}
//! ```
//!
//! * `key_id`: a name for people and error messages, unique in the file (ASCII letters,
//!   digits, `.`, `_` and `-`, first a letter or digit, at most 128);
//! * `role`: `remote` or `local` — the runner role the key may sign rows for — or `citer`,
//!   a key that may sign citations (`gate cite`; SPEC: Who may cite);
//! * `public_key`: the ed25519 public key, 64 lowercase hex digits (32 bytes); a valid curve
//!   point that is not of small order, unique in the file.
//!
//! Other members (`comment`, say) are ignored; a repeated key in an object is refused. The
//! file may hold at most [`MAX_TRUST_FILE_BYTES`]. Its presence switches authentication on:
//! every remote row must then carry a `sig` that verifies under a key declared for `remote`,
//! and every citation a `sig` that verifies under the `citer` key it names.
//!
//! # Text forms
//!
//! * a signature (`sig`): 128 lowercase hex digits, the 64 bytes of an ed25519 signature;
//! * a runner's secret key (the CI secret): `seedledger-ed25519-secret:` followed by 64
//!   lowercase hex digits, the 32-byte ed25519 secret seed (surrounding whitespace ignored).

use crate::errors::{FieldError, FieldProblem, ParseError};
use crate::fields::Fields;
use crate::witness::Runner;
use ed25519_dalek::{Signature, SigningKey, VerifyingKey};
use std::fmt;

/// Where a repository declares its trusted runner keys, relative to its root.
pub const TRUST_FILE: &str = "props/trusted-runners.jsonl";

/// The largest trust file read; a larger one is refused.
pub const MAX_TRUST_FILE_BYTES: u64 = 1 << 20;

/// The prefix of a runner's secret key in its text form.
pub const SECRET_KEY_PREFIX: &str = "seedledger-ed25519-secret:";

/// What a declared key may sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum KeyRole {
    /// Witness rows of a local runner.
    Local,
    /// Witness rows of a remote runner.
    Remote,
    /// Citations (`gate cite`).
    Citer,
}

impl KeyRole {
    /// The role's name in the trust file.
    pub fn as_str(self) -> &'static str {
        match self {
            KeyRole::Local => "local",
            KeyRole::Remote => "remote",
            KeyRole::Citer => "citer",
        }
    }
}

impl From<Runner> for KeyRole {
    fn from(runner: Runner) -> KeyRole {
        match runner {
            Runner::Local => KeyRole::Local,
            Runner::Remote => KeyRole::Remote,
        }
    }
}

impl fmt::Display for KeyRole {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One declared key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TrustedKey {
    /// The key's name, unique in the file.
    pub key_id: String,
    /// What the key may sign.
    pub role: KeyRole,
    /// The ed25519 public key.
    pub public_key: VerifyingKey,
    /// 1-based line of the trust file that declares it.
    pub line: usize,
}

/// The keys of one trust file, in file order.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TrustedKeys {
    keys: Vec<TrustedKey>,
}

/// A trust file that cannot be read: names the line and, where one is at fault, the field.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("line {line}: {message}")]
pub struct TrustFileError {
    /// 1-based line.
    pub line: usize,
    /// The field at fault, when one is.
    pub field: Option<String>,
    /// A lowercase fragment, naming the field when there is one.
    pub message: String,
}

/// A runner's secret key (the remote runner's CI secret). Its `Debug` shows the public key
/// only.
#[derive(Clone)]
pub struct RunnerKey(SigningKey);

/// A runner's secret key text that cannot be read. Never repeats the text (it is a secret).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "expected `{SECRET_KEY_PREFIX}` followed by 64 lowercase hex digits (as `cargo xtask keys generate` prints it): {0}"
)]
pub struct KeyTextError(&'static str);

impl TrustedKeys {
    /// Reads a trust file's bytes (see the module docs for the format).
    pub fn parse_bytes(bytes: &[u8]) -> Result<TrustedKeys, TrustFileError> {
        let text = std::str::from_utf8(bytes).map_err(|e| TrustFileError {
            line: bytes[..e.valid_up_to()]
                .iter()
                .filter(|&&b| b == b'\n')
                .count()
                + 1,
            field: None,
            message: "not UTF-8 text".to_string(),
        })?;
        TrustedKeys::parse(text)
    }

    /// Reads a trust file's text (see the module docs for the format).
    pub fn parse(text: &str) -> Result<TrustedKeys, TrustFileError> {
        let mut keys: Vec<TrustedKey> = Vec::new();
        for (i, l) in text.lines().enumerate() {
            if l.trim().is_empty() {
                continue;
            }
            let line = i + 1;
            let key = parse_key(l, line)?;
            let field_err = |field: &str, message: String| TrustFileError {
                line,
                field: Some(field.to_string()),
                message: format!("field `{field}`: {message}"),
            };
            if let Some(earlier) = keys.iter().find(|k| k.key_id == key.key_id) {
                return Err(field_err(
                    "key_id",
                    format!(
                        "`{}` is already declared on line {}",
                        key.key_id, earlier.line
                    ),
                ));
            }
            if let Some(earlier) = keys.iter().find(|k| k.public_key == key.public_key) {
                return Err(field_err(
                    "public_key",
                    format!(
                        "already declared on line {} (key `{}`); a key has one role",
                        earlier.line, earlier.key_id
                    ),
                ));
            }
            keys.push(key);
        }
        Ok(TrustedKeys { keys })
    }

    /// Every declared key, in file order.
    pub fn keys(&self) -> &[TrustedKey] {
        &self.keys
    }

    /// The keys declared for `role`.
    pub fn with_role(&self, role: KeyRole) -> impl Iterator<Item = &TrustedKey> {
        self.keys.iter().filter(move |k| k.role == role)
    }

    /// The declaration of `public_key`, whatever its role.
    pub fn find(&self, public_key: &VerifyingKey) -> Option<&TrustedKey> {
        self.keys.iter().find(|k| &k.public_key == public_key)
    }
}

impl TrustedKey {
    /// The key as one line of the trust file (no trailing newline).
    pub fn to_json_line(&self) -> String {
        let quoted = |s: &str| serde_json::Value::from(s).to_string();
        format!(
            "{{\"key_id\":{},\"role\":\"{}\",\"public_key\":\"{}\"}}",
            quoted(&self.key_id),
            self.role.as_str(),
            public_key_hex(&self.public_key)
        )
    }
}

fn parse_key(text: &str, line: usize) -> Result<TrustedKey, TrustFileError> {
    let at_line = |e: ParseError| {
        let (field, message) = match e {
            ParseError::Field(f) => (
                Some(f.field.clone()),
                FieldError { line: None, ..f }.to_string(),
            ),
            ParseError::NotJson {
                column, message, ..
            } => (None, format!("not JSON: column {column}: {message}")),
            ParseError::DuplicateKey { key, .. } => {
                let message = format!("duplicate key `{key}`");
                (Some(key), message)
            }
            other => (None, other.to_string()),
        };
        TrustFileError {
            line,
            field,
            message,
        }
    };
    let value = crate::json::parse(text).map_err(at_line)?;
    let f = Fields::of(&value).map_err(at_line)?;
    let field_err = |field: &str, problem: FieldProblem| {
        at_line(ParseError::Field(FieldError {
            field: field.to_string(),
            line: None,
            problem,
        }))
    };
    let key_id = f.text("key_id").map_err(|e| at_line(e.into()))?;
    if crate::hash::check_id("key id", key_id).is_err() {
        return Err(field_err(
            "key_id",
            FieldProblem::Invalid {
                expected: "ASCII letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 128",
            },
        ));
    }
    let role = match f.text("role").map_err(|e| at_line(e.into()))? {
        "remote" => KeyRole::Remote,
        "local" => KeyRole::Local,
        "citer" => KeyRole::Citer,
        _ => {
            return Err(field_err(
                "role",
                FieldProblem::Invalid {
                    expected: "`remote`, `local` or `citer`",
                },
            ));
        }
    };
    let hex = f.text("public_key").map_err(|e| at_line(e.into()))?;
    let public_key = parse_public_key(hex).map_err(|why| {
        field_err(
            "public_key",
            FieldProblem::Refused {
                why: why.to_string(),
            },
        )
    })?;
    Ok(TrustedKey {
        key_id: key_id.to_string(),
        role,
        public_key,
        line,
    })
}

/// An ed25519 public key from 64 lowercase hex digits; refuses a point that is not on the
/// curve and a weak (small-order) key, under which forged signatures would verify.
pub fn parse_public_key(hex: &str) -> Result<VerifyingKey, &'static str> {
    let bytes: [u8; 32] =
        from_hex(hex).ok_or("expected 64 lowercase hex digits (an ed25519 public key)")?;
    let key = VerifyingKey::from_bytes(&bytes).map_err(|_| "not an ed25519 public key")?;
    if key.is_weak() {
        return Err("a weak ed25519 key (of small order), which anyone can sign for");
    }
    Ok(key)
}

/// A public key as 64 lowercase hex digits.
pub fn public_key_hex(key: &VerifyingKey) -> String {
    to_hex(key.as_bytes())
}

/// A signature as 128 lowercase hex digits (a row's `sig`).
pub fn signature_to_hex(sig: &Signature) -> String {
    to_hex(&sig.to_bytes())
}

/// A row's `sig` text as a signature, or why not (a lowercase fragment).
pub fn signature_from_hex(text: &str) -> Result<Signature, String> {
    match from_hex::<64>(text) {
        Some(bytes) => Ok(Signature::from_bytes(&bytes)),
        None => Err(format!(
            "not an ed25519 signature: expected 128 lowercase hex digits, found {}",
            describe_bad_hex(text, 128)
        )),
    }
}

impl RunnerKey {
    /// The key whose 32-byte ed25519 secret seed is `secret` (e.g. fresh OS randomness).
    pub fn from_secret_bytes(secret: &[u8; 32]) -> RunnerKey {
        RunnerKey(SigningKey::from_bytes(secret))
    }

    /// Reads the text form (`seedledger-ed25519-secret:<64 hex>`, whitespace around it
    /// ignored). The error never repeats the text.
    pub fn parse(text: &str) -> Result<RunnerKey, KeyTextError> {
        let text = text.trim();
        let Some(hex) = text.strip_prefix(SECRET_KEY_PREFIX) else {
            return Err(KeyTextError(if from_hex::<32>(text).is_some() {
                "found 64 hex digits without the prefix (a public key from the trust file is not a secret key)"
            } else if text.is_empty() {
                "the value is empty"
            } else {
                "the prefix is missing"
            }));
        };
        from_hex::<32>(hex)
            .map(|secret| RunnerKey::from_secret_bytes(&secret))
            .ok_or(KeyTextError(
                "the digits after the prefix are not 64 lowercase hex digits",
            ))
    }

    /// The text form: `seedledger-ed25519-secret:` and 64 lowercase hex digits.
    pub fn to_secret_text(&self) -> String {
        format!("{SECRET_KEY_PREFIX}{}", to_hex(self.0.as_bytes()))
    }

    /// The public half of the key.
    pub fn public_key(&self) -> VerifyingKey {
        self.0.verifying_key()
    }

    /// The key that signs (`ed25519_dalek::Signer`).
    pub fn signing_key(&self) -> &SigningKey {
        &self.0
    }
}

impl fmt::Debug for RunnerKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RunnerKey")
            .field("public_key", &public_key_hex(&self.public_key()))
            .finish_non_exhaustive()
    }
}

fn to_hex(bytes: &[u8]) -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let mut out = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        out.push(char::from(HEX[usize::from(b >> 4)]));
        out.push(char::from(HEX[usize::from(b & 0xf)]));
    }
    out
}

/// Exactly `2 * N` lowercase hex digits as `N` bytes.
fn from_hex<const N: usize>(text: &str) -> Option<[u8; N]> {
    let digits = text.as_bytes();
    if digits.len() != 2 * N {
        return None;
    }
    let value = |d: u8| match d {
        b'0'..=b'9' => Some(d - b'0'),
        b'a'..=b'f' => Some(d - b'a' + 10),
        _ => None,
    };
    let mut out = [0u8; N];
    for (i, pair) in digits.chunks_exact(2).enumerate() {
        out[i] = (value(pair[0])? << 4) | value(pair[1])?;
    }
    Some(out)
}

fn describe_bad_hex(text: &str, want: usize) -> String {
    match text
        .char_indices()
        .find(|(_, c)| !matches!(c, '0'..='9' | 'a'..='f'))
    {
        Some((at, c)) => format!("{c:?} at byte {at}"),
        None => format!("{} digits instead of {want}", text.len()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const PK: &str = "3d4017c3e843895a92b70aa74d1b7ebc9c982ccf2ec4968cc0cd55f12af4660c";

    fn line(key_id: &str, role: &str, pk: &str) -> String {
        format!(r#"{{"key_id":"{key_id}","role":"{role}","public_key":"{pk}"}}"#)
    }

    fn other_pk() -> String {
        public_key_hex(&RunnerKey::from_secret_bytes(&[7; 32]).public_key())
    }

    #[test]
    fn reads_keys_and_writes_them_back() {
        let text = format!(
            "{}\n\n{}\n",
            line("remote-ci", "remote", PK),
            line("laptop", "local", &other_pk())
        );
        let keys = TrustedKeys::parse(&text).unwrap();
        assert_eq!(keys.keys().len(), 2);
        let remote: Vec<_> = keys.with_role(KeyRole::Remote).collect();
        assert_eq!(remote.len(), 1);
        assert_eq!(
            (remote[0].key_id.as_str(), remote[0].line),
            ("remote-ci", 1)
        );
        assert_eq!(keys.keys()[1].line, 3);
        assert_eq!(
            keys.keys()[0].to_json_line(),
            line("remote-ci", "remote", PK)
        );
        assert_eq!(
            keys.find(&keys.keys()[1].public_key).map(|k| k.role),
            Some(KeyRole::Local)
        );
        assert_eq!(TrustedKeys::parse("").unwrap().keys().len(), 0);
    }

    #[test]
    fn errors_name_the_line_and_the_field() {
        let good = line("remote-ci", "remote", PK);
        let cases: Vec<(String, usize, Option<&str>, &str)> = vec![
            (format!("{good}\nnot json"), 2, None, "not JSON"),
            (format!("{good}\n[1]"), 2, None, "object"),
            (line("", "remote", PK), 1, Some("key_id"), "missing"),
            (line("../x", "remote", PK), 1, Some("key_id"), "letters"),
            (
                line("a", "cloud", PK),
                1,
                Some("role"),
                "`remote`, `local` or `citer`",
            ),
            (
                line("a", "remote", &PK.to_uppercase()),
                1,
                Some("public_key"),
                "64 lowercase hex",
            ),
            (
                line("a", "remote", &PK[2..]),
                1,
                Some("public_key"),
                "64 lowercase hex",
            ),
            // The identity point: a weak key.
            (
                line("a", "remote", &format!("01{}", "0".repeat(62))),
                1,
                Some("public_key"),
                "weak",
            ),
            (
                format!("{good}\n{}", line("remote-ci", "local", &other_pk())),
                2,
                Some("key_id"),
                "already declared on line 1",
            ),
            (
                format!("{good}\n{}", line("other", "local", PK)),
                2,
                Some("public_key"),
                "already declared on line 1",
            ),
            (
                r#"{"key_id":"a","key_id":"b","role":"remote","public_key":"x"}"#.to_string(),
                1,
                Some("key_id"),
                "duplicate key",
            ),
        ];
        for (text, want_line, want_field, want) in cases {
            let e = TrustedKeys::parse(&text).unwrap_err();
            assert_eq!(e.line, want_line, "{text}: {e}");
            assert_eq!(e.field.as_deref(), want_field, "{text}: {e}");
            assert!(e.to_string().contains(want), "{text}: {e}");
            if let Some(field) = want_field {
                assert!(e.to_string().contains(&format!("`{field}`")), "{e}");
            }
        }
        let e = TrustedKeys::parse_bytes(b"\n\n{\"key_id\":\"\xff\"}").unwrap_err();
        assert_eq!((e.line, e.message.as_str()), (3, "not UTF-8 text"));
    }

    #[test]
    fn secret_key_text_round_trips_and_is_never_echoed() {
        let key = RunnerKey::from_secret_bytes(&[42; 32]);
        let text = key.to_secret_text();
        assert_eq!(text, format!("{SECRET_KEY_PREFIX}{}", "2a".repeat(32)));
        let back = RunnerKey::parse(&format!("  {text}\n")).unwrap();
        assert_eq!(back.public_key(), key.public_key());
        assert!(!format!("{key:?}").contains(&"2a".repeat(32)));
        for (bad, secret) in [
            (String::new(), None),
            (PK.to_string(), Some(PK)),
            (SECRET_KEY_PREFIX.to_string(), None),
            (
                format!("{SECRET_KEY_PREFIX}{}", "2A".repeat(32)),
                Some("2A2A"),
            ),
            (
                format!("{SECRET_KEY_PREFIX}{}", "zz".repeat(32)),
                Some("zzzz"),
            ),
            (
                format!("{SECRET_KEY_PREFIX}{}", "2a".repeat(31)),
                Some("2a2a"),
            ),
        ] {
            let e = RunnerKey::parse(&bad).unwrap_err().to_string();
            if let Some(secret) = secret {
                assert!(!e.contains(secret), "{e}");
            }
        }
        assert!(
            RunnerKey::parse(PK)
                .unwrap_err()
                .to_string()
                .contains("without the prefix")
        );
    }

    #[test]
    fn signatures_are_128_lowercase_hex_digits() {
        let sig = Signature::from_bytes(&[0xab; 64]);
        assert_eq!(signature_to_hex(&sig), "ab".repeat(64));
        assert_eq!(signature_from_hex(&"ab".repeat(64)).unwrap(), sig);
        for (bad, why) in [
            ("ab".repeat(63), "126 digits instead of 128"),
            ("AB".repeat(64), "'A' at byte 0"),
            (format!("{}=", "q".repeat(3)), "'q' at byte 0"),
            (String::new(), "0 digits"),
        ] {
            let e = signature_from_hex(&bad).unwrap_err();
            assert!(e.contains(why), "{e}");
        }
    }
}
