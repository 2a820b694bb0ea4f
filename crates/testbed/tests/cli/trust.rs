//! Authenticated runner roles through the real binary: `keys generate`, a
//! remote `prop reproduce` that signs with `$SEEDLEDGER_RUNNER_KEY`, and `gate decide` /
//! `gate cite` with and without the trust file — including the issue's forgery, a local
//! pass row relabelled `remote`.

use crate::support::{Root, Run};
use serde_json::Value;

const PROPERTY: &str = "order_receipt_roundtrip";
const PATCH: &str = "pr-7";
/// The environment-dependent failure of the example domain: seed 1171 of 1170..=1173 fails
/// with a German locale and passes without it.
const LOCAL_ONLY: (&str, &str) = ("ORDERS_LOCALE", "de_DE");
const KEY_ENV: &str = "SEEDLEDGER_RUNNER_KEY";
const TRUST_FILE: &str = "props/trusted-runners.jsonl";

fn run(root: &Root, args: &[&str], env: &[(&str, &str)]) -> Run {
    root.run_env(args, env)
}

/// `keys generate --role remote`: the secret key printed on stdout.
fn generate(root: &Root, extra: &[&str]) -> String {
    let mut args = vec!["keys", "generate", "--role", "remote"];
    args.extend(extra);
    let out = run(root, &args, &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    out.stdout.trim_end().to_string()
}

/// The local run: seed 1171 fails, into `local/pr-7/`.
fn local_run(root: &Root) {
    let out = run(
        root,
        &[
            "prop",
            "run",
            "--property",
            PROPERTY,
            "--seeds",
            "1170..=1173",
            "--patch-id",
            PATCH,
            "--out",
            "local",
        ],
        &[LOCAL_ONLY],
    );
    assert_eq!(out.code, 1, "{}\n{}", out.stdout, out.stderr);
}

/// The remote job: `prop reproduce local --out remote`, with `env`.
fn reproduce(root: &Root, env: &[(&str, &str)]) -> Run {
    let out = run(
        root,
        &[
            "prop",
            "reproduce",
            "local",
            "--out",
            "remote",
            "--runner",
            "remote",
            "--repeat",
            "1",
        ],
        env,
    );
    assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
    out
}

fn witness_file(out: &str) -> String {
    format!("{out}/{PATCH}/{PROPERTY}.witness.jsonl")
}

fn rows(root: &Root, file: &str) -> Vec<Value> {
    std::fs::read_to_string(root.path().join(file))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// `gate decide --format json` over `files`: the run and its last stdout line.
fn decide(root: &Root, files: &[&str]) -> (Run, Value) {
    let mut args = vec!["gate", "decide", "--format", "json", "--property", PROPERTY];
    args.push("--witnesses");
    args.extend(files);
    let out = run(root, &args, &[]);
    assert_ne!(out.code, 2, "{}", out.stderr);
    let last = out.stdout.lines().last().unwrap_or_default();
    let json: Value = serde_json::from_str(last).unwrap();
    (out, json)
}

/// Writes `file` as `from`'s text with the row of seed `seed` relabelled `"runner":"remote"`
/// by a text edit (the issue's forgery). Returns the relabelled row's witness id.
fn relabel(root: &Root, from: &str, file: &str, seed: u64) -> String {
    let text = std::fs::read_to_string(root.path().join(from)).unwrap();
    let mut id = None;
    let edited: Vec<String> = text
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            if v["seed"] == seed {
                assert_eq!(v["verdict"], "pass", "{l}");
                id = Some(v["witness_id"].as_str().unwrap().to_string());
                assert!(l.contains(r#""runner":"local""#), "{l}");
                l.replace(r#""runner":"local""#, r#""runner":"remote""#)
            } else {
                l.to_string()
            }
        })
        .collect();
    let path = root.path().join(file);
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    std::fs::write(path, edited.join("\n") + "\n").unwrap();
    id.unwrap()
}

fn is_hex(s: &str, len: usize) -> bool {
    s.len() == len && s.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[test]
fn keys_generate_declares_a_remote_key_and_prints_only_its_secret() {
    let root = Root::new();
    let out = run(&root, &["keys", "generate", "--role", "remote"], &[]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    // stdout is the secret alone, ready for `| gh secret set SEEDLEDGER_RUNNER_KEY`.
    assert_eq!(out.stdout.lines().count(), 1, "{}", out.stdout);
    let secret = out.stdout.trim_end();
    let hex = secret.strip_prefix("seedledger-ed25519-secret:").unwrap();
    assert!(is_hex(hex, 64), "{secret}");
    assert!(
        out.stderr.contains("gh secret set SEEDLEDGER_RUNNER_KEY"),
        "{}",
        out.stderr
    );
    assert!(out.stderr.contains(TRUST_FILE), "{}", out.stderr);

    // The trust file declares the key's public half for the remote role.
    let text = std::fs::read_to_string(root.path().join(TRUST_FILE)).unwrap();
    assert_eq!(text.lines().count(), 1, "{text}");
    let declared: Value = serde_json::from_str(text.trim_end()).unwrap();
    assert_eq!(declared["role"], "remote");
    let public = declared["public_key"].as_str().unwrap();
    assert!(is_hex(public, 64), "{declared}");
    assert_ne!(
        public, hex,
        "the trust file holds the public key, never the secret"
    );
    assert!(!text.contains(hex));
    let key = seedledger_format::RunnerKey::parse(secret).unwrap();
    assert_eq!(seedledger_format::public_key_hex(&key.public_key()), public);
    let key_id = declared["key_id"].as_str().unwrap();
    assert_eq!(key_id, format!("remote-{}", &public[..8]));

    // A second key is appended; a repeated key id is refused and nothing is printed.
    generate(&root, &["--key-id", "remote-2"]);
    let again = run(
        &root,
        &[
            "keys", "generate", "--role", "remote", "--key-id", "remote-2",
        ],
        &[],
    );
    assert_eq!(again.code, 2, "{}", again.stderr);
    assert!(again.stdout.is_empty());
    assert!(
        again
            .stderr
            .contains("line 2: key id `remote-2` is already declared"),
        "{}",
        again.stderr
    );
    let text = std::fs::read_to_string(root.path().join(TRUST_FILE)).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");

    // `keys list` shows both, and which one the environment's secret is.
    let listed = run(&root, &["keys", "list"], &[(KEY_ENV, secret)]);
    assert_eq!(listed.code, 0, "{}", listed.stderr);
    assert_eq!(listed.stdout.lines().count(), 2, "{}", listed.stdout);
    assert!(
        listed
            .stdout
            .starts_with(&format!("{key_id} remote {public} (line 1)"))
    );
    assert!(
        listed
            .stderr
            .contains(&format!("{KEY_ENV} is key `{key_id}` (remote role)")),
        "{}",
        listed.stderr
    );

    // Outside a repository (no props/) nothing is generated.
    let empty = tempfile::tempdir().unwrap();
    let out = run(
        &root,
        &["keys", "generate", "--root", empty.path().to_str().unwrap()],
        &[],
    );
    assert_eq!(out.code, 2);
    assert!(out.stdout.is_empty());
    assert!(out.stderr.contains("no props/ directory"), "{}", out.stderr);
}

#[test]
fn signed_remote_rows_are_admitted_and_a_relabelled_local_row_is_refused() {
    let root = Root::new();
    local_run(&root);

    // Before any key is declared the issue's forgery works, and the gate says why it can:
    // roles are unauthenticated.
    let forged = relabel(&root, &witness_file("local"), "forged/local.jsonl", 1170);
    let (out, json) = decide(&root, &["forged/local.jsonl"]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json["reason"], "stable signature across opposite verdicts");
    assert_eq!(json["pass_id"], forged.as_str());
    assert_eq!(json["roles"], "unauthenticated");
    assert!(
        out.stderr
            .contains("note: runner roles are unauthenticated"),
        "{}",
        out.stderr
    );

    // Keys set up: the remote job's secret signs every row it writes.
    let secret = generate(&root, &[]);
    let remote = reproduce(&root, &[(KEY_ENV, &secret)]);
    assert!(!remote.stderr.contains("warning"), "{}", remote.stderr);
    let signed = rows(&root, &witness_file("remote"));
    assert_eq!(signed.len(), 1, "one failing seed replayed");
    assert_eq!(signed[0]["runner"], "remote");
    assert_eq!(signed[0]["seed"], 1171);
    assert!(
        is_hex(signed[0]["sig"].as_str().unwrap(), 128),
        "{}",
        signed[0]
    );
    // A local run never signs, whatever its environment holds.
    assert!(
        rows(&root, &witness_file("local"))
            .iter()
            .all(|r| r.get("sig").is_none())
    );

    let local = witness_file("local");
    let remote = witness_file("remote");
    let (out, json) = decide(&root, &[&local, &remote]);
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert_eq!(json["admit"], true);
    assert_eq!(json["reason"], "stable signature across opposite verdicts");
    assert_eq!(json["roles"], "authenticated");
    assert_eq!(json["same_seed_review"]["passed"], true, "{json}");
    assert!(
        out.stderr.contains(&format!(
            "note: runner roles are authenticated by `{TRUST_FILE}`"
        )),
        "{}",
        out.stderr
    );

    // The same forgery now: the relabelled row is unsigned, so it is malformed.
    let (out, json) = decide(&root, &["forged/local.jsonl"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(json["reason"], format!("malformed witness {forged}"));
    assert_eq!(json["roles"], "authenticated");
    assert!(
        out.stderr
            .contains("field `sig`: missing: the repository declares trusted runner keys"),
        "{}",
        out.stderr
    );
    // ... also beside the genuine signed remote rows.
    let (out, json) = decide(&root, &["forged/local.jsonl", &remote]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(json["reason"], format!("malformed witness {forged}"));

    // A signed remote row edited after signing (fail -> pass, by text) is malformed too.
    let text = std::fs::read_to_string(root.path().join(&remote)).unwrap();
    let flipped = text.replace(r#""seed":1171"#, r#""seed":1170"#);
    assert_ne!(flipped, text);
    std::fs::write(root.path().join("forged/remote.jsonl"), flipped).unwrap();
    let (out, json) = decide(&root, &[&local, "forged/remote.jsonl"]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    let id = signed[0]["witness_id"].as_str().unwrap();
    assert_eq!(json["reason"], format!("malformed witness {id}"));
    assert!(
        out.stderr
            .contains("the row was changed after it was signed"),
        "{}",
        out.stderr
    );

    // A remote job without the secret writes unsigned rows, says the gate will refuse them,
    // and the gate does.
    std::fs::remove_dir_all(root.path().join("remote")).unwrap();
    let unsigned = reproduce(&root, &[]);
    assert!(
        unsigned.stderr.contains(
            "warning: SEEDLEDGER_RUNNER_KEY is not set, so these remote rows are unsigned"
        ),
        "{}",
        unsigned.stderr
    );
    let (out, json) = decide(&root, &[&local, &remote]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert_eq!(
        json["reason"],
        format!(
            "malformed witness {}",
            rows(&root, &remote)[0]["witness_id"].as_str().unwrap()
        )
    );

    // A remote replay signed by a key the trust file does not declare is refused as well.
    std::fs::remove_dir_all(root.path().join("remote")).unwrap();
    let stranger = seedledger_format::RunnerKey::from_secret_bytes(&[9; 32]).to_secret_text();
    let undeclared = reproduce(&root, &[(KEY_ENV, &stranger)]);
    assert!(
        undeclared.stderr.contains("is not declared in"),
        "{}",
        undeclared.stderr
    );
    let (out, _) = decide(&root, &[&local, &remote]);
    assert_eq!(out.code, 1, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("does not verify under the key declared for the `remote` role"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_remote_seed_replay_signs_its_row_and_a_bad_secret_is_an_error() {
    let root = Root::new();
    let secret = generate(&root, &[]);
    let replay = |env: &[(&str, &str)], runner: &str| {
        run(
            &root,
            &[
                "prop",
                "replay",
                "--property",
                PROPERTY,
                "--seed",
                "1170",
                "--runner",
                runner,
                "--no-receipt",
            ],
            env,
        )
    };
    let out = replay(&[(KEY_ENV, &secret)], "remote");
    assert_eq!(out.code, 0, "{}", out.stderr);
    let out = replay(&[(KEY_ENV, &secret)], "local");
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stderr
            .contains("SEEDLEDGER_RUNNER_KEY is set, but this runner's role is local"),
        "{}",
        out.stderr
    );
    let written = rows(
        &root,
        &format!("target/seedledger/local/{PROPERTY}.witness.jsonl"),
    );
    assert_eq!(written.len(), 2);
    assert_eq!(written[0]["runner"], "remote");
    assert!(
        is_hex(written[0]["sig"].as_str().unwrap(), 128),
        "{}",
        written[0]
    );
    assert_eq!(written[1]["runner"], "local");
    assert!(written[1].get("sig").is_none(), "{}", written[1]);

    // A secret that is not a key stops the remote runner before it writes anything, and is
    // never echoed.
    let bad = "seedledger-ed25519-secret:0123";
    let out = replay(&[(KEY_ENV, bad)], "remote");
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains("SEEDLEDGER_RUNNER_KEY: expected"),
        "{}",
        out.stderr
    );
    assert!(!out.stderr.contains("0123"), "{}", out.stderr);
    assert_eq!(
        rows(
            &root,
            &format!("target/seedledger/local/{PROPERTY}.witness.jsonl")
        )
        .len(),
        2
    );
}

#[test]
fn without_a_trust_file_every_decision_says_roles_are_unauthenticated() {
    let root = Root::new();
    local_run(&root);
    reproduce(&root, &[]);
    let local = witness_file("local");
    let remote = witness_file("remote");

    // gate decide, human: the decision on stdout, the note on stderr.
    let out = run(
        &root,
        &[
            "gate",
            "decide",
            "--property",
            PROPERTY,
            "--witnesses",
            &local,
            &remote,
        ],
        &[],
    );
    assert_eq!(out.code, 0, "{}", out.stderr);
    assert!(
        out.stdout
            .starts_with("stable signature across opposite verdicts\n")
    );
    assert!(
        out.stderr.contains(
            "note: runner roles are unauthenticated: no `props/trusted-runners.jsonl` declares trusted runner keys"
        ),
        "{}",
        out.stderr
    );
    // gate decide, JSON.
    let (_, json) = decide(&root, &[&local, &remote]);
    assert_eq!(json["roles"], "unauthenticated");

    // gate cite, JSON: whatever the citation's fate, the roles are stated.
    let receipt = format!("local/{PATCH}/{PROPERTY}.receipt.json");
    let out = run(
        &root,
        &[
            "gate",
            "cite",
            "--format",
            "json",
            "--property",
            PROPERTY,
            "--witnesses",
            &local,
            &remote,
            "--receipts",
            &receipt,
            "--expires-at",
            "2999-01-01T00:00:00Z",
        ],
        &[],
    );
    assert_ne!(out.code, 2, "{}", out.stderr);
    let json: Value = serde_json::from_str(out.stdout.lines().last().unwrap()).unwrap();
    assert_eq!(json["roles"], "unauthenticated", "{json}");
    assert!(
        out.stderr
            .contains("note: runner roles are unauthenticated"),
        "{}",
        out.stderr
    );
}

#[test]
fn a_bad_trust_file_is_an_error_naming_file_line_and_field() {
    let root = Root::new();
    local_run(&root);
    generate(&root, &[]);
    let path = root.path().join(TRUST_FILE);
    let mut text = std::fs::read_to_string(&path).unwrap();
    text.push_str(r#"{"key_id":"laptop","role":"local","public_key":"not-a-key"}"#);
    text.push('\n');
    std::fs::write(&path, text).unwrap();
    let out = run(
        &root,
        &[
            "gate",
            "decide",
            "--property",
            PROPERTY,
            "--witnesses",
            &witness_file("local"),
        ],
        &[],
    );
    assert_eq!(out.code, 2, "{}", out.stderr);
    assert!(
        out.stderr.contains(
            "trust file `props/trusted-runners.jsonl`: line 2: field `public_key`: expected 64 lowercase hex digits"
        ),
        "{}",
        out.stderr
    );
}

#[test]
fn a_remote_prop_run_signs_every_row_and_a_local_run_none() {
    let root = Root::new();
    let secret = generate(&root, &[]);
    let prop_run = |runner: &str, out: &str| {
        let out = run(
            &root,
            &[
                "prop",
                "run",
                "--property",
                PROPERTY,
                "--seeds",
                "1170..=1173",
                "--runner",
                runner,
                "--out",
                out,
            ],
            &[(KEY_ENV, &secret)],
        );
        assert_eq!(out.code, 0, "{}\n{}", out.stdout, out.stderr);
        out
    };
    prop_run("remote", "remote");
    let signed = rows(&root, &format!("remote/local/{PROPERTY}.witness.jsonl"));
    assert_eq!(signed.len(), 4);
    for row in &signed {
        assert_eq!(row["runner"], "remote");
        assert!(is_hex(row["sig"].as_str().unwrap(), 128), "{row}");
    }
    let local = prop_run("local", "local");
    assert!(
        local
            .stderr
            .contains("SEEDLEDGER_RUNNER_KEY is set, but this runner's role is local"),
        "{}",
        local.stderr
    );
    let unsigned = rows(&root, &format!("local/local/{PROPERTY}.witness.jsonl"));
    assert_eq!(unsigned.len(), 4);
    assert!(unsigned.iter().all(|r| r.get("sig").is_none()));
}
