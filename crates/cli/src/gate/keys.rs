//! `cargo xtask keys generate|list`: declares keys in the trust file and prints their
//! secrets (reading the trust file and the keys is `common::keys`).

use crate::common::keys::{CITER_KEY_ENV, RUNNER_KEY_ENV, Roles};
use crate::common::read_bounded;
use anyhow::{Context, bail};
use clap::{Args, Subcommand};
use seedledger_format::{
    ExitStatus, KeyRole, MAX_TRUST_FILE_BYTES, RunnerKey, TRUST_FILE, TrustedKey, TrustedKeys,
    public_key_hex, write_atomic,
};
use std::path::{Path, PathBuf};

/// Keys for authenticated runner roles.
#[derive(Debug, Subcommand)]
pub enum KeysCommand {
    /// Generate a runner key: declare its public key in the trust file, print its secret.
    ///
    /// Appends `{"key_id": ..., "role": ..., "public_key": ...}` to
    /// ROOT/props/trusted-runners.jsonl (created if missing; commit it) and prints the secret
    /// key — `seedledger-ed25519-secret:` and 64 hex digits — alone on stdout, so that it can
    /// go straight into the CI secret the remote job reads:
    ///
    ///   cargo xtask keys generate --role remote | gh secret set SEEDLEDGER_RUNNER_KEY
    ///
    /// Keep the secret nowhere else: whoever holds it can sign rows as the remote runner.
    /// Once the trust file exists, `gate decide` and `gate cite` refuse every remote row that
    /// is not signed by a key declared for `remote` (`malformed witness <id>`).
    ///
    /// `--role citer` makes a key that may sign citations: once the trust file exists, only
    /// citations signed by a declared citer key are honoured, and `gate cite` needs the key:
    ///
    ///   (umask 077; cargo xtask keys generate --role citer > ~/.seedledger-citer.key)
    ///   cargo xtask gate cite --key-file ~/.seedledger-citer.key ...
    ///
    /// Exit status: 0 generated; 2 error (no props/ directory under ROOT, a trust file that
    /// cannot be read, a key id already declared, a failed write).
    #[command(verbatim_doc_comment)]
    Generate(GenerateArgs),
    /// List the declared keys, and which one $SEEDLEDGER_RUNNER_KEY is (if set).
    ///
    /// One line per key: `<key_id> <role> <public key> (line <n>)`. Exit status: 0 listed
    /// (also when there is no trust file); 2 the trust file or the variable cannot be read.
    List(ListArgs),
}

/// What a generated key may sign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum KeyRoleArg {
    /// Witness rows of the remote runner.
    Remote,
    /// Witness rows of a local runner (which never signs; declared for completeness).
    Local,
    /// Citations (`gate cite`).
    Citer,
}

impl From<KeyRoleArg> for KeyRole {
    fn from(role: KeyRoleArg) -> KeyRole {
        match role {
            KeyRoleArg::Remote => KeyRole::Remote,
            KeyRoleArg::Local => KeyRole::Local,
            KeyRoleArg::Citer => KeyRole::Citer,
        }
    }
}

#[derive(Debug, Args)]
pub struct GenerateArgs {
    /// What the key signs: the remote runner's rows, or citations (`citer`).
    #[arg(long, value_enum, default_value = "remote")]
    role: KeyRoleArg,
    /// A name for the key in the trust file [default: ROLE-<first 8 hex digits of the public
    /// key>].
    #[arg(long, value_name = "ID")]
    key_id: Option<String>,
    /// The repository root whose props/ holds the trust file [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

#[derive(Debug, Args)]
pub struct ListArgs {
    /// The repository root whose props/ holds the trust file [default: the current directory, or the nearest ancestor with props/].
    #[arg(long, value_name = "DIR")]
    root: Option<PathBuf>,
}

pub fn run(cmd: KeysCommand) -> ExitStatus {
    let res = match cmd {
        KeysCommand::Generate(args) => generate(&args),
        KeysCommand::List(args) => list(&args),
    };
    res.unwrap_or_else(|e| {
        errln!("error: {e:#}");
        ExitStatus::Error
    })
}

fn generate(args: &GenerateArgs) -> anyhow::Result<ExitStatus> {
    let root = args
        .root
        .clone()
        .unwrap_or_else(crate::common::discover_root);
    let props = root.join("props");
    if !props.is_dir() {
        bail!(
            "no props/ directory under `{}`: run this from the repository root, or pass --root",
            if root.as_os_str().is_empty() {
                Path::new(".").display()
            } else {
                root.display()
            }
        );
    }
    let path = root.join(TRUST_FILE);
    let existing = match std::fs::symlink_metadata(&path) {
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Vec::new(),
        _ => read_bounded(&path, "trust file", MAX_TRUST_FILE_BYTES)?,
    };
    let keys = TrustedKeys::parse_bytes(&existing)
        .with_context(|| format!("trust file `{}`", path.display()))?;

    let mut secret = [0u8; 32];
    getrandom::fill(&mut secret)
        .map_err(|e| anyhow::anyhow!("cannot get randomness from the operating system: {e}"))?;
    let key = RunnerKey::from_secret_bytes(&secret);
    let role = KeyRole::from(args.role);
    let public_hex = public_key_hex(&key.public_key());
    let key_id = args
        .key_id
        .clone()
        .unwrap_or_else(|| format!("{role}-{}", &public_hex[..8]));
    seedledger_format::check_id("key id", &key_id).map_err(|e| anyhow::anyhow!("--key-id: {e}"))?;
    if let Some(k) = keys.keys().iter().find(|k| k.key_id == key_id) {
        bail!(
            "trust file `{}`: line {}: key id `{key_id}` is already declared; pass another --key-id",
            path.display(),
            k.line
        );
    }
    let declared = TrustedKey {
        key_id: key_id.clone(),
        role,
        public_key: key.public_key(),
        line: 0,
    };
    let mut text = existing;
    if !text.is_empty() && !text.ends_with(b"\n") {
        text.push(b'\n');
    }
    let line = text.iter().filter(|&&b| b == b'\n').count() + 1;
    text.extend_from_slice(declared.to_json_line().as_bytes());
    text.push(b'\n');
    write_atomic(&path, &text).with_context(|| format!("cannot write `{}`", path.display()))?;

    {
        use std::io::Write as _;
        let mut out = std::io::stdout().lock();
        if writeln!(out, "{}", key.to_secret_text())
            .and_then(|()| out.flush())
            .is_err()
        {
            bail!(
                "could not print the secret key; the key `{key_id}` on line {line} of `{}` has no usable secret: delete that line",
                path.display()
            );
        }
    }
    errln!(
        "added key `{key_id}` (role {role}, public key {public_hex}) on line {line} of `{}`: commit it",
        path.display()
    );
    match role {
        KeyRole::Remote => errln!(
            "the secret key is on stdout: store it as the CI secret {RUNNER_KEY_ENV} of the remote job and nowhere else,\n    e.g. cargo xtask keys generate --role remote | gh secret set {RUNNER_KEY_ENV}"
        ),
        KeyRole::Local => errln!(
            "the secret key is on stdout; note that a local runner never signs its rows (local rows need no signature)"
        ),
        KeyRole::Citer => errln!(
            "the secret key is on stdout: keep it where only the maintainers who cite can read it ({CITER_KEY_ENV}, or a key file of mode 600 given to `gate cite --key-file`)"
        ),
    }
    Ok(ExitStatus::Success)
}

fn list(args: &ListArgs) -> anyhow::Result<ExitStatus> {
    let root = args
        .root
        .clone()
        .unwrap_or_else(crate::common::discover_root);
    let roles = Roles::load(&root)?;
    errln!("{}", roles.note());
    if let Some(keys) = roles.keys() {
        for k in keys.keys() {
            outln!(
                "{} {} {} (line {})",
                k.key_id,
                k.role,
                public_key_hex(&k.public_key),
                k.line
            );
        }
    }
    if let Some(text) = std::env::var_os(RUNNER_KEY_ENV).filter(|v| !v.is_empty()) {
        let key = text
            .to_str()
            .ok_or_else(|| anyhow::anyhow!("{RUNNER_KEY_ENV}: not UTF-8 text"))
            .and_then(|t| {
                RunnerKey::parse(t).map_err(|e| anyhow::anyhow!("{RUNNER_KEY_ENV}: {e}"))
            })?;
        match roles.declared(&key) {
            Some(k) => errln!(
                "note: {RUNNER_KEY_ENV} is key `{}` ({} role)",
                k.key_id,
                k.role
            ),
            None => errln!(
                "note: {RUNNER_KEY_ENV} (public key {}) is not declared",
                public_key_hex(&key.public_key())
            ),
        }
    }
    Ok(ExitStatus::Success)
}
