//! Authenticated runner roles: which remote rows pass, and that every other one reaches
//! `decide_freeze` as `malformed witness <id>` with a detail saying why. Rows are signed here
//! with ed25519-dalek directly (not through the runner), over the format crate's canonical
//! bytes, whose spelling a golden test in the format crate pins.

use super::*;
use crate::decide::{Expected, REASON_ADMIT, decide_freeze, witness_lines_from_bytes};
use ed25519_dalek::{Signer, SigningKey};
use seedledger_format::{public_key_hex, signature_to_hex};

const REMOTE_SECRET: [u8; 32] = [1; 32];
const LOCAL_SECRET: [u8; 32] = [2; 32];
const STRANGER_SECRET: [u8; 32] = [3; 32];

fn key(secret: &[u8; 32]) -> SigningKey {
    SigningKey::from_bytes(secret)
}

/// The trust file: one remote key and one local key.
fn trusted() -> TrustedKeys {
    let line = |id: &str, role: &str, secret: &[u8; 32]| {
        format!(
            r#"{{"key_id":"{id}","role":"{role}","public_key":"{}"}}"#,
            public_key_hex(&key(secret).verifying_key())
        )
    };
    TrustedKeys::parse(&format!(
        "{}\n{}\n",
        line("remote-ci", "remote", &REMOTE_SECRET),
        line("laptop", "local", &LOCAL_SECRET)
    ))
    .unwrap()
}

fn expected() -> Expected {
    Expected {
        property_id: "order_total_nonneg".to_string(),
        digest: "d".repeat(64),
        pin: "p".repeat(64),
        bound: "total>=0".to_string(),
    }
}

/// A row as the runner writes it, without `sig`.
fn row(id: &str, seed: u64, verdict: &str, runner: &str) -> String {
    let signature = if verdict == "pass" {
        "ok"
    } else {
        "assert:quote.total >= 0"
    };
    format!(
        r#"{{"witness_id":"{id}","property_id":"order_total_nonneg","property_digest":"{d}","fixture_pin":"{p}","bound":"total>=0","seed":{seed},"verdict":"{verdict}","signature":"{signature}","runner":"{runner}","freeze_writer":false,"run_id":"run-1","patch_id":"pr-7","code":"diff:abc"}}"#,
        d = "d".repeat(64),
        p = "p".repeat(64),
    )
}

/// `line` with `"sig":"<sig>"` appended, `sig` signing the line's canonical bytes.
fn signed(line: &str, secret: &[u8; 32]) -> String {
    let canonical = witness_canonical_bytes(line).unwrap();
    let sig = signature_to_hex(&key(secret).sign(&canonical));
    with_sig(line, &format!("\"{sig}\""))
}

/// `line` with a raw `sig` member (any JSON) appended.
fn with_sig(line: &str, raw: &str) -> String {
    format!("{},\"sig\":{raw}}}", line.strip_suffix('}').unwrap())
}

/// The file `rows` (one per line), read and authenticated.
fn read(rows: &[String]) -> Vec<WitnessLine> {
    let text = rows.join("\n");
    authenticate(
        text.as_bytes(),
        witness_lines_from_bytes(text.as_bytes()),
        &trusted(),
    )
}

/// A local fail plus the remote row under test: admitted exactly when the remote row is
/// authentic.
fn decide_with_remote(remote: &str) -> crate::FreezeDecision {
    decide_freeze(
        &read(&[row("l-1", 1, "fail", "local"), remote.to_string()]),
        &expected(),
    )
}

#[test]
fn a_valid_remote_signature_passes() {
    let remote = signed(&row("r-2", 2, "pass", "remote"), &REMOTE_SECRET);
    assert_eq!(
        authenticate_row(&remote, &trusted()).map(|k| k.key_id.as_str()),
        Ok("remote-ci")
    );
    let lines = read(std::slice::from_ref(&remote));
    assert!(lines[0].row.is_ok());
    let d = decide_with_remote(&remote);
    assert_eq!(d.reason, REASON_ADMIT, "{}", d.detail);
    assert_eq!(d.pass_id.as_deref(), Some("r-2"));
}

#[test]
fn a_signature_survives_respelling_the_line() {
    // Canonical bytes are over the value: spaces, member order and escapes do not matter.
    let remote = signed(&row("r-2", 2, "pass", "remote"), &REMOTE_SECRET);
    let respelled = remote
        .replacen('{', "{ ", 1)
        .replace("\"pr-7\"", "\"pr\\u002d7\"");
    assert_ne!(respelled, remote);
    assert!(authenticate_row(&respelled, &trusted()).is_ok());
}

#[test]
fn local_rows_need_no_signature() {
    let lines = read(&[
        row("l-1", 1, "fail", "local"),
        row("l-2", 2, "pass", "local"),
    ]);
    assert!(lines.iter().all(|l| l.row.is_ok()));
    // ... and a local row with a sig that verifies under nothing is not checked either.
    let lines = read(&[with_sig(&row("l-3", 3, "pass", "local"), "\"zz\"")]);
    assert!(lines[0].row.is_ok());
}

/// One refused remote row: the batch is refused as `malformed witness <id>`, and the detail
/// names the row's line, the field `sig` and `why`.
fn check_refused(name: &str, remote: &str, id: &str, why: &str) {
    let lines = read(&[row("l-1", 1, "fail", "local"), remote.to_string()]);
    let d = decide_freeze(&lines, &expected());
    assert!(!d.admit, "{name}");
    assert_eq!(
        d.reason,
        format!("malformed witness {id}"),
        "{name}: {}",
        d.detail
    );
    assert_eq!(d.rejected_row, Some(1), "{name}");
    assert!(
        d.detail.starts_with("line 2: "),
        "{name}: the detail names the line: {}",
        d.detail
    );
    assert!(
        d.detail.contains(why),
        "{name}: `{why}` not in: {}",
        d.detail
    );
}

#[test]
fn unsigned_and_badly_signed_remote_rows_are_malformed() {
    let good = row("r-2", 2, "pass", "remote");
    let cases: Vec<(&str, String, &str)> = vec![
        (
            "unsigned",
            good.clone(),
            "field `sig`: missing: the repository declares trusted runner keys",
        ),
        (
            "signed by an undeclared key",
            signed(&good, &STRANGER_SECRET),
            "does not verify under the key declared for the `remote` role (`remote-ci`)",
        ),
        (
            "signed by a key declared for the local role",
            signed(&good, &LOCAL_SECRET),
            "signed by key `laptop`, which the trust file declares for the `local` role (line 2), not for `remote`",
        ),
        (
            "sig is not hex",
            with_sig(&good, &format!("\"{}\"", "g".repeat(128))),
            "not an ed25519 signature: expected 128 lowercase hex digits, found 'g' at byte 0",
        ),
        (
            "sig is base64",
            with_sig(&good, "\"q83vEjRWeJA=\""),
            "not an ed25519 signature: expected 128 lowercase hex digits",
        ),
        (
            "sig is too short",
            with_sig(&good, &format!("\"{}\"", "ab".repeat(32))),
            "64 digits instead of 128",
        ),
        (
            "sig is uppercase hex",
            {
                let s = signed(&good, &REMOTE_SECRET);
                let hex = s.rsplit('"').nth(1).unwrap().to_string();
                s.replace(&hex, &hex.to_uppercase())
            },
            "expected 128 lowercase hex digits",
        ),
        (
            "sig is a number",
            with_sig(&good, "12"),
            "expected a string of 128 lowercase hex digits, found a number",
        ),
        (
            "sig is null",
            with_sig(&good, "null"),
            "field `sig`: missing",
        ),
        (
            "the row has no canonical bytes",
            with_sig(
                &good.replace("\"run_id\"", "\"elapsed\":1.5,\"run_id\""),
                &format!("\"{}\"", "ab".repeat(64)),
            ),
            "the row has no canonical bytes to verify: field `elapsed`",
        ),
    ];
    for (name, remote, why) in cases {
        check_refused(name, &remote, "r-2", why);
    }
}

#[test]
fn a_row_changed_after_signing_is_malformed() {
    let good = signed(&row("r-2", 2, "pass", "remote"), &REMOTE_SECRET);
    let tampered = "was changed after it was signed";
    for (from, to) in [
        (r#""witness_id":"r-2""#, r#""witness_id":"r-3""#),
        (
            r#""property_id":"order_total_nonneg""#,
            r#""property_id":"order_total_adds_up""#,
        ),
        (r#""seed":2"#, r#""seed":1"#),
        (
            r#""verdict":"pass","signature":"ok""#,
            r#""verdict":"fail","signature":"ok""#,
        ),
        (r#""bound":"total>=0""#, r#""bound":"total>0""#),
        (r#""patch_id":"pr-7""#, r#""patch_id":"pr-8""#),
        (r#""code":"diff:abc""#, r#""code":"diff:abd""#),
        (r#""run_id":"run-1""#, r#""run_id":"run-2""#),
        // A member added after signing (an unknown extension) is a change too.
        (r#""run_id":"run-1""#, r#""note":"x","run_id":"run-1""#),
    ] {
        let changed = good.replace(from, to);
        assert_ne!(changed, good, "{from}");
        let id = if to.starts_with(r#""witness_id""#) {
            "r-3"
        } else {
            "r-2"
        };
        check_refused(to, &changed, id, tampered);
    }
    // Out-of-scope digest or pin: the row is still refused, not silently dropped.
    let changed = good.replace(&"p".repeat(64), &"q".repeat(64));
    check_refused("fixture_pin", &changed, "r-2", tampered);
}

#[test]
fn a_local_row_relabelled_remote_is_malformed() {
    // The forgery: a local pass row relabelled `remote`. Unsigned, it is refused; signed by
    // the local key (if a local runner ever signed), it is refused too.
    let local_pass = row("l-2", 2, "pass", "local");
    let relabelled = local_pass.replace(r#""runner":"local""#, r#""runner":"remote""#);
    check_refused("unsigned", &relabelled, "l-2", "field `sig`: missing");
    let local_signed = signed(&local_pass, &LOCAL_SECRET);
    let relabelled = local_signed.replace(r#""runner":"local""#, r#""runner":"remote""#);
    check_refused(
        "signed locally",
        &relabelled,
        "l-2",
        "does not verify under the key declared for the `remote` role",
    );
    // A remote-signed row relabelled local and back is the same value again, and passes.
    let remote = signed(&row("r-2", 2, "pass", "remote"), &REMOTE_SECRET);
    assert!(authenticate_row(&remote, &trusted()).is_ok());
}

#[test]
fn a_duplicate_sig_key_is_malformed() {
    // Already refused by the strict JSON reader; authentication leaves it refused.
    let good = signed(&row("r-2", 2, "pass", "remote"), &REMOTE_SECRET);
    let twice = with_sig(&good, "\"00\"");
    check_refused("duplicate sig", &twice, "r-2", "duplicate key `sig`");
}

#[test]
fn without_a_declared_remote_key_no_remote_row_passes() {
    let only_local = TrustedKeys::parse(&format!(
        r#"{{"key_id":"laptop","role":"local","public_key":"{}"}}"#,
        public_key_hex(&key(&LOCAL_SECRET).verifying_key())
    ))
    .unwrap();
    let remote = signed(&row("r-2", 2, "pass", "remote"), &REMOTE_SECRET);
    let e = authenticate_row(&remote, &only_local).unwrap_err();
    assert!(e.contains("declares no key for the `remote` role"), "{e}");
    let e = authenticate_row(&remote, &TrustedKeys::default()).unwrap_err();
    assert!(e.contains("declares no key for the `remote` role"), "{e}");
}

#[test]
fn lines_that_are_already_bad_are_left_as_they_are() {
    let rows = [
        "not json".to_string(),
        String::new(),
        row("r-2", 2, "pass", "remote").replace(r#""seed":2"#, r#""seed":"2""#),
    ];
    let text = rows.join("\n");
    let plain = witness_lines_from_bytes(text.as_bytes());
    let authenticated = authenticate(text.as_bytes(), plain.clone(), &trusted());
    assert_eq!(authenticated, plain);
}

#[test]
fn crlf_lines_are_authenticated_like_lf_lines() {
    let remote = signed(&row("r-2", 2, "pass", "remote"), &REMOTE_SECRET);
    let text = format!("{}\r\n{remote}\r\n", row("l-1", 1, "fail", "local"));
    let lines = authenticate(
        text.as_bytes(),
        witness_lines_from_bytes(text.as_bytes()),
        &trusted(),
    );
    assert!(lines.iter().all(|l| l.row.is_ok()), "{lines:?}");
}
