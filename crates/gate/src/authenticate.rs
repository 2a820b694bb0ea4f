//! Authenticated runner roles (SPEC: Witness row extensions): where the repository declares
//! trusted runner keys, a remote row counts only when its `sig` verifies under a key declared
//! for the `remote` role; otherwise it is malformed.
//!
//! This is a separate, pure step that the caller applies *before* [`crate::decide_freeze`],
//! which stays exactly SPEC's decision 2 and knows nothing of keys: a row refused here reaches
//! it as a malformed row, so the batch is refused with `malformed witness <id>`, and the
//! decision's detail says why (`line 3: field `sig`: …`). Local rows need no signature.
//!
//! Without a trust file nothing here runs and a `runner` field is a claim anyone can make; the
//! caller says so with every decision.

use ed25519_dalek::Signature;
use seedledger_format::{
    FieldError, FieldProblem, KeyRole, ParseError, Runner, SIG_FIELD, TrustedKey, TrustedKeys,
    WitnessLine, signature_from_hex, witness_canonical_bytes,
};
use serde_json::Value;

/// Turns every remote row of one witness file that is not signed by a key declared for the
/// `remote` role into a malformed row: its `row` becomes a [`ParseError::Field`] on `sig`
/// (with the row's line) whose problem says why. Every other line is returned unchanged.
///
/// `lines` are the lines of `bytes` as [`crate::witness_lines_from_bytes`] read them (each
/// row's canonical bytes are computed from its own line of `bytes`, so every member of the
/// row is covered, not only the fields `decide_freeze` reads). Pure.
pub fn authenticate(bytes: &[u8], lines: Vec<WitnessLine>, keys: &TrustedKeys) -> Vec<WitnessLine> {
    let texts: Vec<&[u8]> = bytes.split(|&b| b == b'\n').collect();
    lines
        .into_iter()
        .map(|it| {
            let text = it.line.checked_sub(1).and_then(|i| texts.get(i)).copied();
            authenticate_line(text, it, keys)
        })
        .collect()
}

/// [`authenticate`] for one line of a witness file, as a reader streaming the file sees it:
/// `text` is the line's bytes (without `\n`; a trailing `\r` is ignored), `None` when the
/// caller does not have them. A remote row not signed by a key declared for the `remote`
/// role becomes malformed; every other line is returned unchanged. Pure.
pub fn authenticate_line(
    text: Option<&[u8]>,
    mut it: WitnessLine,
    keys: &TrustedKeys,
) -> WitnessLine {
    if !matches!(&it.row, Ok(row) if row.runner == Runner::Remote) {
        return it;
    }
    let text = text
        .map(|t| t.strip_suffix(b"\r").unwrap_or(t))
        .and_then(|t| std::str::from_utf8(t).ok());
    let outcome = match text {
        Some(text) => authenticate_row(text, keys).map(|_| ()),
        None => Err("the row's line is not in the bytes given".to_string()),
    };
    if let Err(why) = outcome {
        it.row = Err(ParseError::Field(FieldError {
            field: SIG_FIELD.to_string(),
            line: Some(it.line),
            problem: FieldProblem::Refused { why },
        }));
    }
    it
}

/// The declared `remote` key whose signature the row `line` (one line of JSON) carries in
/// `sig`, over its canonical bytes (see `WitnessRow`, `# Canonical bytes`), verified strictly
/// (no weak keys, no malleable signatures). `Err` says why not, as a lowercase fragment: no
/// `sig`, a `sig` that is not 128 lowercase hex digits, a row with no canonical bytes, a
/// signature by a key declared for another role, or one that verifies under no declared key
/// (the row was changed after signing, or an undeclared key signed it).
pub fn authenticate_row<'k>(line: &str, keys: &'k TrustedKeys) -> Result<&'k TrustedKey, String> {
    let value: Value = serde_json::from_str(line).unwrap_or(Value::Null);
    let sig = match value.get(SIG_FIELD) {
        None | Some(Value::Null) => {
            return Err(
                "missing: the repository declares trusted runner keys, so a remote row must be signed by a key declared for the `remote` role"
                    .to_string(),
            );
        }
        Some(Value::String(text)) => signature_from_hex(text)?,
        Some(other) => {
            return Err(format!(
                "not an ed25519 signature: expected a string of 128 lowercase hex digits, found {}",
                json_type(other)
            ));
        }
    };
    let canonical = witness_canonical_bytes(line)
        .map_err(|e| format!("the row has no canonical bytes to verify: {e}"))?;
    let verifies = |k: &&TrustedKey| verify(k, &canonical, &sig);
    if let Some(key) = keys.with_role(KeyRole::Remote).find(verifies) {
        return Ok(key);
    }
    if let Some(other) = keys.keys().iter().find(verifies) {
        return Err(format!(
            "signed by key `{}`, which the trust file declares for the `{}` role (line {}), not for `remote`: it cannot vouch for a remote row",
            other.key_id, other.role, other.line
        ));
    }
    let remote: Vec<String> = keys
        .with_role(KeyRole::Remote)
        .map(|k| format!("`{}`", k.key_id))
        .collect();
    if remote.is_empty() {
        return Err(
            "verifies under no declared key: the trust file declares no key for the `remote` role"
                .to_string(),
        );
    }
    Err(format!(
        "does not verify under the {} declared for the `remote` role ({}): the row was changed after it was signed, or signed by a key the trust file does not declare",
        if remote.len() == 1 { "key" } else { "keys" },
        remote.join(", ")
    ))
}

fn verify(key: &TrustedKey, message: &[u8], sig: &Signature) -> bool {
    key.public_key.verify_strict(message, sig).is_ok()
}

fn json_type(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests;
